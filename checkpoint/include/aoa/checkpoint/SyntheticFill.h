//===- SyntheticFill.h - Deterministic tensor contents ----------*- C++ -*-===//
//
// Tests and benchmarks need checkpoints with known contents in any layout.
// A synthetic fill gives every element of every key a value that depends only
// on (fill, key, element index in the key's row-major flattening), never on
// the layout, so the same key written as TP2 shards, TP4 shards or flat
// ranges holds the same values, and any two checkpoints filled alike compare
// equal.
//
//  - random[:SEED] (seed 0 by default): a 64-bit hash of (seed, key, index).
//    Floating dtypes get k / 2^(p-1) for a k in [-2^(p-1), 2^(p-1)), with p
//    the dtype's significand bits (11 for float16, 8 for bfloat16, 24, 53,
//    4 for float8_e4m3fn, 3 for float8_e5m2): well spread over [-1, 1) and
//    exactly representable, so no rounding happens. Integer dtypes get the
//    hash's low bits as their two's complement value; bool gets its lowest
//    bit (0 or 1); float8_e8m0fnu the hash mod 255 as its bits (2^-127 to
//    2^127, never NaN); the opaque dtypes (float8_e4m3fnuz, float8_e5m2fnuz,
//    complex64) the hash's low bytes.
//  - iota: element i holds i, rounded to nearest for floating dtypes (exact
//    up to 2^p; float8_e4m3fn is NaN past 464, float8_e8m0fnu the power of
//    two PyTorch rounds i to), wrapped to the dtype's width for integers,
//    i mod 2 for bool, and i's low bytes for the opaque dtypes.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_CHECKPOINT_SYNTHETICFILL_H
#define AOA_CHECKPOINT_SYNTHETICFILL_H

#include "aoa/ir/Box.h"
#include "aoa/ir/DType.h"
#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace aoa::checkpoint {

using runtime::Error;
using runtime::Expected;
using runtime::Status;

struct SyntheticFill {
  enum class Kind { Random, Iota };
  Kind kind = Kind::Random;
  uint64_t seed = 0;

  /// "random:7", "iota": the spelling parseSyntheticFill reads.
  std::string toString() const;
};

/// Reads "random", "random:SEED" (a decimal integer below 2^64) or "iota".
Expected<SyntheticFill> parseSyntheticFill(std::string_view text);

/// Writes the fill's values for `region` (a box inside `globalShape`) of
/// `key` into `buffer`: dense, row-major, `dtype`, bufferSize = region volume
/// × dtype size bytes.
Status fillSynthetic(const SyntheticFill &fill, std::string_view key,
                     DType dtype, llvm::ArrayRef<int64_t> globalShape,
                     const Box &region, void *buffer, size_t bufferSize);

} // namespace aoa::checkpoint

#endif // AOA_CHECKPOINT_SYNTHETICFILL_H
