//===- Cast.h - Converting arrays of elements between dtypes ----*- C++ -*-===//
//
// Bulk conversion of contiguous arrays between any two castable dtypes, as
// numpy's astype (docs/language.md, "Casts"): any dtype to itself is a copy
// of the bits; between floats, and from integers to floats, values round
// once to nearest even (FloatConversion.h); to the FP8 formats as PyTorch's
// .to() (Float8Conversion.h: through float32, NaN or Inf on overflow);
// floats to integers truncate toward zero; anything to bool is `!= 0` (NaN
// is true); bool is 0 or 1.
//
// Some casts are checked (castMayFail): a float to an integer meets NaN,
// infinities and values outside the integer's range, and an integer to a
// narrower (or differently signed) integer meets values that do not fit.
// Such an element has no result: the cast fails, naming the first one,
// rather than wrap or give an unspecified value.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_CAST_H
#define AOA_RUNTIME_TRANSFORMS_CAST_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/support/Error.h"

#include <cstddef>
#include <string>

namespace aoa::runtime {

/// True when castElements converts `from` to `to`: a dtype to itself (a
/// copy of the bits), and every pair of castable dtypes (isCastableDType:
/// all but float8_e4m3fnuz, float8_e5m2fnuz and complex64, which are only
/// moved).
bool isCastSupported(DType from, DType to);

/// "cannot cast complex64 to float32: complex64 is only moved, never cast",
/// with a hint.
Error castUnsupportedError(DType from, DType to);

/// True when a cast from `from` to `to` can meet an element without a
/// result (a float to an integer; an integer to one of a narrower range).
bool castMayFail(DType from, DType to);

/// A cast-failure word (the smallest failing element's offset) that
/// records no failure.
constexpr unsigned long long kNoCastFailure = ~0ull;

/// "cannot cast float32 to int8: ELEMENT is NaN, infinite or outside
/// int8's range" (or "does not fit int8" for an integer source), with a
/// hint; `element` says which element, e.g. "element [2, 3] of 'w'".
Error castFailureError(DType from, DType to, const std::string &element);

/// Converts `count` elements at `src` (of dtype `from`) into `dst` (of dtype
/// `to`). Pointers need no alignment. The two arrays must not overlap, except
/// that a cast between dtypes of equal size may work in place (src == dst).
/// Fails, writing nothing, for an unsupported pair or overlapping arrays;
/// fails after converting when a checked cast meets an element without a
/// result (castFailureError, naming the first such index).
Status castElements(DType from, const void *src, DType to, void *dst,
                    size_t count);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_CAST_H
