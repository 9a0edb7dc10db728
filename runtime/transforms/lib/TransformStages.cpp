//===- TransformStages.cpp ------------------------------------------------===//
#include "aoa/runtime/transforms/TransformStages.h"

#include "aoa/runtime/transforms/Cast.h"

#include <optional>
#include <string>

namespace aoa::runtime {

std::vector<int64_t> TransformStage::outputShape() const {
  return permutation.apply(llvm::ArrayRef<int64_t>(inputShape));
}

uint64_t TransformStage::outputBytes() const {
  uint64_t bytes = dtypeSize(to);
  for (int64_t extent : inputShape)
    bytes *= uint64_t(extent);
  return bytes;
}

namespace {

const char *const kPlanHint =
    "the plan's copy does not match its buffers; recompile the plan";

/// The data being transformed: the shape and dtype it has once the stages
/// planned so far have run, plus a permutation and a cast still pending
/// (the stage being built).
class PendingTransform {
public:
  PendingTransform(DType dtype, llvm::ArrayRef<int64_t> shape)
      : shape_(shape.begin(), shape.end()), dtype_(dtype),
        pending_(Permutation::identity(shape.size())) {}

  Status permute(const Permutation &permutation) {
    if (permutation.rank() != logicalShape().size())
      return Error{"copy: permutation " + permutation.toString() +
                       " does not fit data of rank " +
                       std::to_string(logicalShape().size()),
                   kPlanHint};
    pending_ = pending_.then(permutation);
    return Status();
  }

  Status cast(DType to) {
    // Two casts in a row must round through the first one.
    if (castTo_)
      endStage();
    if (!isCastSupported(dtype_, to))
      return Error{"copy: cannot cast " + std::string(dtypeName(dtype_)) +
                       " to " + std::string(dtypeName(to)),
                   kPlanHint};
    castTo_ = to;
    return Status();
  }

  void reshape(std::vector<int64_t> shape) {
    // A reshape sees the data in its permuted order.
    if (!pending_.isIdentity())
      endStage();
    shape_ = std::move(shape);
    pending_ = Permutation::identity(shape_.size());
  }

  /// The shape the data has after the pending permutation.
  std::vector<int64_t> logicalShape() const {
    return pending_.apply(llvm::ArrayRef<int64_t>(shape_));
  }
  DType logicalDType() const { return castTo_ ? *castTo_ : dtype_; }

  /// Turns what is pending into a stage.
  void endStage() {
    TransformStage stage;
    stage.inputShape = shape_;
    stage.permutation = pending_;
    stage.from = dtype_;
    stage.to = logicalDType();
    shape_ = stage.outputShape();
    dtype_ = stage.to;
    pending_ = Permutation::identity(shape_.size());
    castTo_.reset();
    stages_.push_back(std::move(stage));
  }

  std::vector<TransformStage> takeStages() { return std::move(stages_); }

private:
  std::vector<int64_t> shape_;
  DType dtype_;
  Permutation pending_;
  std::optional<DType> castTo_;
  std::vector<TransformStage> stages_;
};

int64_t volumeOf(llvm::ArrayRef<int64_t> shape) {
  int64_t volume = 1;
  for (int64_t extent : shape)
    volume *= extent;
  return volume;
}

/// The shape after a reshape or flatten marker, or an error.
Expected<std::vector<int64_t>> reshapedShape(const plan::TransformStep &step,
                                             llvm::ArrayRef<int64_t> shape) {
  llvm::ArrayRef<int64_t> canonical = step.canonical;
  auto mismatch = [&]() -> Error {
    return Error{"copy: '" + step.text() +
                     "' does not apply to data of shape " + formatShape(shape),
                 kPlanHint};
  };
  if (canonical.size() < 3)
    return mismatch();
  if (step.kind == plan::TransformStep::Kind::Reshape) {
    if (shape.size() != 2 || shape[0] % canonical[1] != 0 ||
        shape[1] != volumeOf(canonical.drop_front(2)))
      return mismatch();
    std::vector<int64_t> result{shape[0] / canonical[1]};
    result.insert(result.end(), canonical.begin() + 1, canonical.end());
    return result;
  }
  if (shape.size() != canonical.size() ||
      shape.drop_front() != canonical.drop_front())
    return mismatch();
  return std::vector<int64_t>{shape[0] * canonical[1],
                              volumeOf(canonical.drop_front(2))};
}

} // namespace

Expected<std::vector<TransformStage>>
planTransformStages(llvm::ArrayRef<plan::TransformStep> steps, DType inDtype,
                    llvm::ArrayRef<int64_t> inShape, DType outDtype,
                    llvm::ArrayRef<int64_t> outShape) {
  PendingTransform data(inDtype, inShape);
  for (const plan::TransformStep &step : steps) {
    switch (step.kind) {
    case plan::TransformStep::Kind::Permute:
      if (Status status = data.permute(step.permutation); !status)
        return status.error();
      break;
    case plan::TransformStep::Kind::Cast:
      if (Status status = data.cast(step.dtype); !status)
        return status.error();
      break;
    case plan::TransformStep::Kind::Reshape:
    case plan::TransformStep::Kind::Flatten: {
      Expected<std::vector<int64_t>> shape =
          reshapedShape(step, data.logicalShape());
      if (!shape)
        return shape.error();
      data.reshape(std::move(*shape));
      break;
    }
    }
  }
  std::vector<int64_t> shape = data.logicalShape();
  if (data.logicalDType() != outDtype ||
      llvm::ArrayRef<int64_t>(shape) != outShape)
    return Error{"copy: the transform gives " +
                     std::string(dtypeName(data.logicalDType())) +
                     formatShape(shape) + " but the output buffer is " +
                     std::string(dtypeName(outDtype)) + formatShape(outShape),
                 kPlanHint};
  data.endStage();
  return data.takeStages();
}

namespace {
/// Moves `offset` through stages [first, end).
uint64_t offsetThroughStages(llvm::ArrayRef<TransformStage> stages,
                             size_t first, uint64_t offset) {
  for (size_t k = first; k < stages.size(); ++k) {
    const TransformStage &next = stages[k];
    // Input coordinates of the element, then output axis i takes input
    // axis permutation[i].
    size_t rank = next.inputShape.size();
    std::vector<int64_t> input(rank);
    uint64_t rest = offset;
    for (size_t i = rank; i-- > 0;) {
      uint64_t extent = uint64_t(next.inputShape[i]);
      input[i] = int64_t(rest % extent);
      rest /= extent;
    }
    std::vector<int64_t> outputShape = next.outputShape();
    offset = 0;
    for (size_t i = 0; i < rank; ++i)
      offset = offset * uint64_t(outputShape[i]) +
               uint64_t(input[next.permutation[i]]);
  }
  return offset;
}
} // namespace

uint64_t transformOutputOffset(llvm::ArrayRef<TransformStage> stages,
                               size_t stage, uint64_t offset) {
  return offsetThroughStages(stages, stage + 1, offset);
}

uint64_t transformInputOffset(llvm::ArrayRef<TransformStage> stages,
                              uint64_t offset) {
  return offsetThroughStages(stages, 0, offset);
}

} // namespace aoa::runtime
