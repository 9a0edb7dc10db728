//===- TransformSteps.cpp -------------------------------------------------===//
#include "aoa/runtime/TransformSteps.h"

#include "aoa/runtime/Cast.h"
#include "aoa/runtime/RegionCopy.h"

#include <cstring>
#include <memory>
#include <optional>

namespace aoa::runtime {

namespace {

const char *const kPlanHint =
    "the plan's copy does not match its buffers; recompile the plan";

/// The data being transformed: materialized bytes plus a permutation and a
/// cast that are still to be applied.
class PendingTransform {
public:
  PendingTransform(const TensorView &input) : current_(input) {
    pending_ = Permutation::identity(input.shape.size());
  }

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
    if (castTo_) {
      if (Status status = materialize(std::nullopt); !status.ok())
        return status;
    }
    if (!isCastSupported(current_.dtype, to))
      return Error{"copy: cannot cast " + std::string(dtypeName(current_.dtype)) +
                       " to " + std::string(dtypeName(to)),
                   kPlanHint};
    castTo_ = to;
    return Status();
  }

  Status reshape(std::vector<int64_t> shape) {
    // A reshape sees the data in its permuted order.
    if (!pending_.isIdentity()) {
      if (Status status = materialize(std::nullopt); !status.ok())
        return status;
    }
    current_.shape.assign(shape.begin(), shape.end());
    pending_ = Permutation::identity(shape.size());
    return Status();
  }

  /// The shape the data has after the pending permutation.
  std::vector<int64_t> logicalShape() const {
    return pending_.apply(llvm::ArrayRef<int64_t>(current_.shape));
  }
  DType logicalDType() const { return castTo_ ? *castTo_ : current_.dtype; }

  /// Applies what is pending into `output` (or a temporary when none).
  Status materialize(std::optional<MutableTensorView> output) {
    std::vector<int64_t> shape = logicalShape();
    DType dtype = logicalDType();
    MutableTensorView target;
    if (output) {
      target = MutableTensorView(output->data, output->byteSize, dtype, shape);
    } else {
      size_t bytes = dtypeSize(dtype);
      for (int64_t extent : shape)
        bytes *= size_t(extent);
      auto storage = std::make_unique<uint8_t[]>(bytes ? bytes : 1);
      target = MutableTensorView(storage.get(), bytes, dtype, shape);
      temporaries_.push_back(std::move(storage));
    }
    Box whole = Box::fromShape(current_.shape);
    Status status =
        copyRegion(current_, whole, target, pending_.apply(whole), pending_);
    if (!status.ok())
      return status;
    current_ = TensorView(target.data, target.byteSize, dtype, shape);
    pending_ = Permutation::identity(shape.size());
    castTo_.reset();
    return Status();
  }

private:
  TensorView current_;
  Permutation pending_;
  std::optional<DType> castTo_;
  /// Intermediate results (rare: a reshape between permutations, a cast
  /// chain); they must outlive the view that points at them.
  std::vector<std::unique_ptr<uint8_t[]>> temporaries_;
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
    return Error{"copy: '" + step.text() + "' does not apply to data of shape " +
                     formatShape(shape),
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

Status applyTransformSteps(llvm::ArrayRef<plan::TransformStep> steps,
                           const TensorView &input,
                           const MutableTensorView &output) {
  PendingTransform data(input);
  for (const plan::TransformStep &step : steps) {
    Status status;
    switch (step.kind) {
    case plan::TransformStep::Kind::Permute:
      status = data.permute(step.permutation);
      break;
    case plan::TransformStep::Kind::Cast:
      status = data.cast(step.dtype);
      break;
    case plan::TransformStep::Kind::Reshape:
    case plan::TransformStep::Kind::Flatten: {
      Expected<std::vector<int64_t>> shape =
          reshapedShape(step, data.logicalShape());
      if (!shape.ok())
        return shape.error();
      status = data.reshape(std::move(*shape));
      break;
    }
    }
    if (!status.ok())
      return status;
  }
  std::vector<int64_t> shape = data.logicalShape();
  if (data.logicalDType() != output.dtype ||
      llvm::ArrayRef<int64_t>(shape) != llvm::ArrayRef<int64_t>(output.shape))
    return Error{"copy: the transform gives " +
                     std::string(dtypeName(data.logicalDType())) +
                     formatShape(shape) + " but the output buffer is " +
                     std::string(dtypeName(output.dtype)) +
                     formatShape(output.shape),
                 kPlanHint};
  return data.materialize(output);
}

} // namespace aoa::runtime
