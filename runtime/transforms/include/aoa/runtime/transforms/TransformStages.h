//===- TransformStages.h - A copy transform as strided copies ---*- C++ -*-===//
//
// A plan's `copy` applies transform steps (TransformSteps.h) to a dense
// buffer. Planned as data movement, the steps become a short list of
// stages, each one strided copy (a permutation and a cast) from a dense
// row-major input to a dense row-major output:
//
//  - consecutive permutations compose into one;
//  - a permutation and the cast that follows it fuse into one stage;
//  - a second cast ends the stage before it, so a cast chain rounds through
//    every dtype it names, as the reference does;
//  - a reshape or flatten after a pending permutation ends the stage (the
//    reshape sees the permuted order); otherwise it only relabels the shape.
//
// The CPU executor runs the stages with copyRegion (applyTransformSteps);
// the nccl backend runs the same stages as kernels, so both move the same
// data through the same intermediate dtypes.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_TRANSFORMSTAGES_H
#define AOA_RUNTIME_TRANSFORMS_TRANSFORMSTAGES_H

#include "aoa/ir/DType.h"
#include "aoa/ir/Permutation.h"
#include "aoa/ir/Plan.h"
#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace aoa::runtime {

/// One strided copy of a transform: a dense row-major `inputShape` array of
/// `from` elements becomes the dense row-major array of `to` elements whose
/// shape is permutation.apply(inputShape) (Permutation.h: output axis i is
/// input axis permutation[i]).
struct TransformStage {
  std::vector<int64_t> inputShape;
  Permutation permutation;
  DType from = DType::F32;
  DType to = DType::F32;

  std::vector<int64_t> outputShape() const;
  /// The bytes of the output (a temporary unless this is the last stage).
  uint64_t outputBytes() const;
};

/// The stages that apply `steps` to dense data of `inDtype` and `inShape`,
/// giving `outDtype` data of `outShape`; the last stage writes the output,
/// earlier ones write temporaries of their outputBytes(), each the next
/// stage's input. Never empty: a transform that changes nothing is one
/// identity stage (a plain copy). Fails, with the messages of
/// applyTransformSteps, when a step does not fit the data or the result is
/// not `outDtype` and `outShape`.
Expected<std::vector<TransformStage>>
planTransformStages(llvm::ArrayRef<plan::TransformStep> steps, DType inDtype,
                    llvm::ArrayRef<int64_t> inShape, DType outDtype,
                    llvm::ArrayRef<int64_t> outShape);

/// The row-major index in the last stage's output of the element at
/// row-major index `offset` of stage `stage`'s output: the later stages'
/// permutations move it (a reshape keeps row-major indices).
uint64_t transformOutputOffset(llvm::ArrayRef<TransformStage> stages,
                               size_t stage, uint64_t offset);
/// The same for row-major index `offset` of the first stage's input.
uint64_t transformInputOffset(llvm::ArrayRef<TransformStage> stages,
                              uint64_t offset);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_TRANSFORMSTAGES_H
