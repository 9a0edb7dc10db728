//===- Float8Conversion.h - The 8-bit float formats -------------*- C++ -*-===//
//
// Conversions between float (binary32) and the three 8-bit float formats
// safetensors stores, held as their bits in a uint8_t, bit for bit as
// PyTorch's `.to()` (c10/util/Float8_*.h) for every non-NaN value:
//
//  - float8_e4m3fn (F8_E4M3, OCP FP8 E4M3): sign, 4 exponent bits (bias 7),
//    3 mantissa bits; no infinities; S.1111.111 is NaN; largest finite 448,
//    smallest subnormal 2^-9. From float: round to nearest even; a result
//    past 448 (|x| > 464, so 464 itself rounds to 448), ±Inf and NaN give
//    NaN with the input's sign (0x7F, 0xFF). PyTorch does not saturate.
//  - float8_e5m2 (F8_E5M2, OCP FP8 E5M2): sign, 5 exponent bits (bias 15),
//    2 mantissa bits, IEEE-like: largest finite 57344, smallest subnormal
//    2^-16. From float: round to nearest even, overflow gives ±Inf (from
//    61440 up), NaN gives 0x7F or 0xFF.
//  - float8_e8m0fnu (F8_E8M0, OCP MX E8M0): 8 exponent bits, value
//    2^(e-127), unsigned, no zero, 0xFF is NaN. From float as PyTorch's
//    fp8e8m0fnu_from_fp32_value: the sign is dropped; NaN and ±Inf give
//    0xFF; a normal x = 2^k * (1 + f) gives 2^k, or 2^(k+1) when f >= 1/2
//    (so 3 * 2^k rounds up; 2^128 is NaN); a subnormal or zero gives 2^-127
//    (0x00) up to and including 2^-127, and 2^-126 above it.
//
// To float, every format is exact; a NaN becomes a quiet float NaN of the
// same sign with the format's mantissa in the top payload bits (e4m3fn's NaN
// is 0x7FF00000 or 0xFFF00000, as PyTorch gives; e8m0's is 0x7FC00000).
//
// Host and device code at once (HostDevice.h), branch-free, relying on the
// default floating-point environment like FloatConversion.h.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_FLOAT8CONVERSION_H
#define AOA_RUNTIME_TRANSFORMS_FLOAT8CONVERSION_H

#include "aoa/runtime/transforms/FloatConversion.h"
#include "aoa/runtime/transforms/HostDevice.h"

#include <cstdint>

namespace aoa::runtime {

/// float8_e4m3fn → float, exact.
AOA_HOST_DEVICE inline float float8E4M3ToFloat(uint8_t value) {
  uint32_t sign = uint32_t(value & 0x80u) << 24;
  uint32_t magnitude = value & 0x7Fu;
  // Normal: exponent and mantissa move up 20 bits; the bias goes 7 → 127.
  uint32_t normal = (magnitude << 20) + (uint32_t(127 - 7) << 23);
  // Subnormal (and zero): mantissa * 2^-9, exact in float arithmetic.
  uint32_t subnormal = floatBits(static_cast<float>(magnitude) * 0x1p-9f);
  uint32_t bits = magnitude == 0x7Fu   ? 0x7FF00000u
                  : magnitude >= 0x08u ? normal
                                       : subnormal;
  return floatFromBits(sign | bits);
}

/// float → float8_e4m3fn, rounded to nearest even; NaN past 448.
AOA_HOST_DEVICE inline uint8_t floatToFloat8E4M3(float value) {
  uint32_t bits = floatBits(value);
  uint32_t sign = (bits >> 24) & 0x80u;
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  // |value| >= 2^-6: rebias and round the low 20 mantissa bits away. Below
  // 480 (0x43F00000) the result is at most 0x7F, which is NaN for results
  // past 448; 480 and up (Inf and NaN too) are NaN directly.
  uint32_t rebiased = magnitude - (uint32_t(127 - 7) << 23);
  uint32_t normal = (rebiased + 0x7FFFFu + ((rebiased >> 20) & 1u)) >> 20;
  // |value| < 2^-6: adding 2^14 makes the hardware round to a multiple of
  // 2^-9 (2^14's ulp, the subnormal step), ties to even; rounding up to
  // 2^-6 gives 0x08, the smallest normal's encoding.
  uint32_t subnormal =
      floatBits(floatFromBits(magnitude) + 0x1p14f) - floatBits(0x1p14f);
  uint32_t result = magnitude >= 0x43F00000u                 ? 0x7Fu
                    : magnitude >= (uint32_t(127 - 6) << 23) ? normal
                                                             : subnormal;
  return static_cast<uint8_t>(sign | result);
}

/// float8_e5m2 → float, exact: float8_e5m2 is the top byte of a float16.
AOA_HOST_DEVICE inline float float8E5M2ToFloat(uint8_t value) {
  return halfToFloat(static_cast<uint16_t>(uint16_t(value) << 8));
}

/// float → float8_e5m2, rounded to nearest even; ±Inf on overflow.
AOA_HOST_DEVICE inline uint8_t floatToFloat8E5M2(float value) {
  uint32_t bits = floatBits(value);
  uint32_t sign = (bits >> 24) & 0x80u;
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  // |value| >= 2^-14: rebias and round the low 21 mantissa bits away;
  // everything from 61440 up (Inf included) lands on or past Inf (0x7C).
  uint32_t rebiased = magnitude - (uint32_t(127 - 15) << 23);
  uint32_t rounded = (rebiased + 0xFFFFFu + ((rebiased >> 21) & 1u)) >> 21;
  uint32_t normal = rounded < 0x7Cu ? rounded : 0x7Cu;
  // |value| < 2^-14: adding 2^7 rounds to a multiple of 2^-16 (the
  // subnormal step); rounding up to 2^-14 gives 0x04, the smallest normal.
  uint32_t subnormal =
      floatBits(floatFromBits(magnitude) + 0x1p7f) - floatBits(0x1p7f);
  uint32_t result = magnitude > 0x7F800000u                   ? 0x7Fu
                    : magnitude >= (uint32_t(127 - 14) << 23) ? normal
                                                              : subnormal;
  return static_cast<uint8_t>(sign | result);
}

/// float8_e8m0fnu → float, exact: 2^(e-127); 0x00 is the float subnormal
/// 2^-127, 0xFF a quiet NaN.
AOA_HOST_DEVICE inline float float8E8M0ToFloat(uint8_t value) {
  uint32_t bits = value == 0xFFu   ? 0x7FC00000u
                  : value == 0x00u ? 0x00400000u
                                   : uint32_t(value) << 23;
  return floatFromBits(bits);
}

/// float → float8_e8m0fnu, PyTorch's rule (see the file comment).
AOA_HOST_DEVICE inline uint8_t floatToFloat8E8M0(float value) {
  uint32_t bits = floatBits(value);
  uint32_t exponent = (bits >> 23) & 0xFFu;
  // The guard bit (the mantissa's top) rounds up when anything below it is
  // set, or on a tie when the implicit bit (the result's last) is one.
  bool guard = (bits & 0x00400000u) != 0;
  bool rest = (bits & 0x003FFFFFu) != 0;
  bool roundUp = guard && (rest || exponent > 0);
  uint32_t result = exponent == 0xFFu ? 0xFFu : exponent + (roundUp ? 1u : 0u);
  return static_cast<uint8_t>(result);
}

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_FLOAT8CONVERSION_H
