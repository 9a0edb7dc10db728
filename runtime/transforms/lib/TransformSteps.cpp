//===- TransformSteps.cpp -------------------------------------------------===//
//
// The steps are planned as stages (TransformStages.h) and each stage runs as
// one copyRegion of the whole of its input; stages before the last write
// temporaries (rare: a reshape between permutations, a cast chain).
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/TransformSteps.h"

#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/RegionCopy.h"
#include "aoa/runtime/transforms/TransformStages.h"

#include <memory>
#include <vector>

namespace aoa::runtime {

Status applyTransformSteps(llvm::ArrayRef<plan::TransformStep> steps,
                           const TensorView &input,
                           const MutableTensorView &output,
                           TransformCastFailure *castFailure) {
  Expected<std::vector<TransformStage>> stages = planTransformStages(
      steps, input.dtype, input.shape, output.dtype, output.shape);
  if (!stages)
    return stages.error();
  // Intermediate results; they must outlive the view that points at them.
  std::vector<std::unique_ptr<uint8_t[]>> temporaries;
  const void *data = input.data;
  size_t byteSize = input.byteSize;
  for (size_t i = 0; i < stages->size(); ++i) {
    const TransformStage &stage = (*stages)[i];
    TensorView current(data, byteSize, stage.from, stage.inputShape);
    std::vector<int64_t> shape = stage.outputShape();
    MutableTensorView target;
    if (i + 1 == stages->size()) {
      target = MutableTensorView(output.data, output.byteSize, stage.to, shape);
    } else {
      size_t bytes = size_t(stage.outputBytes());
      temporaries.push_back(std::make_unique<uint8_t[]>(bytes ? bytes : 1));
      target =
          MutableTensorView(temporaries.back().get(), bytes, stage.to, shape);
    }
    Box whole = Box::fromShape(stage.inputShape);
    uint64_t failure = kNoCastFailure;
    if (Status status =
            copyRegion(current, whole, target, stage.permutation.apply(whole),
                       stage.permutation, &failure);
        !status) {
      if (failure != kNoCastFailure && castFailure) {
        castFailure->from = stage.from;
        castFailure->to = stage.to;
        castFailure->offset = transformOutputOffset(*stages, i, failure);
      }
      return status;
    }
    data = target.data;
    byteSize = target.byteSize;
  }
  return Status();
}

} // namespace aoa::runtime
