//===- TransformSteps.h - Running a plan's copy transforms ------*- C++ -*-===//
//
// A plan's `copy` applies a list of transform steps (Paddle's postprocess
// list: permutations, casts, reshape/flatten markers) to a dense row-major
// buffer. Reshape and flatten only reinterpret the shape; permutations and
// casts move data. Consecutive permutations compose, and a permutation and
// the cast that follows it are fused into one strided copy, so the common
// transforms ("[1, 0]", "float16", both) touch the data once. A second cast
// is applied separately: a chain like float32 -> float16 -> float32 must
// round through float16, exactly as the reference does.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_TRANSFORMSTEPS_H
#define AOA_RUNTIME_TRANSFORMS_TRANSFORMSTEPS_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/transforms/TensorView.h"

#include "llvm/ADT/ArrayRef.h"

namespace aoa::runtime {

/// Where a checked cast of a transform met an element without a result:
/// `offset` is the element's row-major index in `output`.
struct TransformCastFailure {
  DType from = DType::F32;
  DType to = DType::F32;
  uint64_t offset = 0;
};

/// Writes `steps` applied to `input` into `output`, whose dtype and shape
/// must be the result's. Fails, with a message that names the step, when a
/// step does not fit the data or the result does not fit `output`; fails
/// after the copy when a cast meets an element without a result (Cast.h),
/// then filling `castFailure` if given (the first such element of the
/// first stage that has one, traced to the output).
Status applyTransformSteps(llvm::ArrayRef<plan::TransformStep> steps,
                           const TensorView &input,
                           const MutableTensorView &output,
                           TransformCastFailure *castFailure = nullptr);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_TRANSFORMSTEPS_H
