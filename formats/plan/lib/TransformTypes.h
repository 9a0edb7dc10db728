//===- TransformTypes.h - What a copy's steps do to a buffer's type -------===//
//
// The type rules of the plan's buffers (docs/plan-format.md, "Instructions"):
// a buffer's size, and the dtype and shape that each transform step (one of
// Paddle's postprocess strings) gives the data it receives.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_TRANSFORMTYPES_H
#define AOA_FORMATS_PLAN_LIB_TRANSFORMTYPES_H

#include "aoa/ir/Plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aoa {

/// `bfloat16[8, 4]`: a type as the plan text spells it.
std::string typeText(DType dtype, llvm::ArrayRef<int64_t> shape);
std::string typeText(const plan::BufferDecl &decl);

/// A buffer's bytes, or nullopt when an extent is negative or the size
/// overflows int64.
std::optional<int64_t> checkedBytes(const plan::BufferDecl &decl);

/// Applies one transform step to the data's dtype and shape; false with
/// `why` (a complete sentence naming the step) when the step cannot apply
/// to such data.
bool applyStep(const plan::TransformStep &step, DType &dtype,
               std::vector<int64_t> &shape, std::string &why);

} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_TRANSFORMTYPES_H
