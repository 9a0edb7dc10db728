//===- Cast.h - Converting arrays of elements between dtypes ----*- C++ -*-===//
//
// Bulk conversion of contiguous arrays: any dtype to itself (a copy of the
// bits), and every pair of floating types (float64, float32, float16,
// bfloat16) with the rounding of FloatConversion.h. Casts involving integer
// or bool dtypes are not defined (DType.h: casts are between floating types).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_CAST_H
#define AOA_RUNTIME_CAST_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/Error.h"

#include <cstddef>

namespace aoa::runtime {

/// True when castElements converts `from` to `to`: equal dtypes, or two
/// floating dtypes.
bool isCastSupported(DType from, DType to);

/// Converts `count` elements at `src` (of dtype `from`) into `dst` (of dtype
/// `to`). Pointers need no alignment. The two arrays must not overlap, except
/// that a cast between dtypes of equal size may work in place (src == dst).
/// Fails, writing nothing, for an unsupported pair or overlapping arrays.
Status castElements(DType from, const void *src, DType to, void *dst,
                    size_t count);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_CAST_H
