//===- FloatConversion.h - Bit-exact float conversions ----------*- C++ -*-===//
//
// Conversions of single values between IEEE binary64 (double), binary32
// (float), binary16 (float16) and bfloat16, the latter two held as their bit
// patterns in uint16_t. All follow IEEE 754 convertFormat:
//
//  - narrowing rounds to nearest, ties to even, with one rounding (never
//    double → float → half, which can round twice);
//  - subnormal results and inputs are exact or correctly rounded;
//  - overflow gives ±Inf, ±Inf stays ±Inf, ±0 keeps its sign;
//  - a NaN stays a NaN of the same sign, made quiet, keeping the top bits of
//    its payload.
//
// They are inline and branch-free (selects, integer and float arithmetic) so
// that loops over arrays of them vectorize. They rely on the default floating
// point environment: round to nearest, no flush-to-zero.
//
// Every function is also a CUDA device function (HostDevice.h), so the GPU's
// copy kernels convert with this very code. nvcc's defaults keep it exact
// there too: float addition and conversions round to nearest even and keep
// subnormals (-ftz=false), and no expression here has a multiply feeding an
// add that FMA contraction could fuse. Do not build it with -use_fast_math.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_FLOATCONVERSION_H
#define AOA_RUNTIME_TRANSFORMS_FLOATCONVERSION_H

#include "aoa/runtime/transforms/HostDevice.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace aoa::runtime {

/// The bits of `value` seen as a `To` of the same size (std::bit_cast is
/// C++20).
template <typename To, typename From>
AOA_HOST_DEVICE inline To bitCast(From value) {
  static_assert(sizeof(To) == sizeof(From), "bitCast needs equal sizes");
  To result;
#ifdef __CUDA_ARCH__
  // std::memcpy is a host function; the builtin becomes a register move.
  __builtin_memcpy(&result, &value, sizeof(To));
#else
  std::memcpy(&result, &value, sizeof(To));
#endif
  return result;
}
AOA_HOST_DEVICE inline uint32_t floatBits(float value) {
  return bitCast<uint32_t>(value);
}
AOA_HOST_DEVICE inline float floatFromBits(uint32_t bits) {
  return bitCast<float>(bits);
}
AOA_HOST_DEVICE inline uint64_t doubleBits(double value) {
  return bitCast<uint64_t>(value);
}
AOA_HOST_DEVICE inline double doubleFromBits(uint64_t bits) {
  return bitCast<double>(bits);
}

/// float16 → float, exact.
AOA_HOST_DEVICE inline float halfToFloat(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000u) << 16;
  uint32_t magnitude = half & 0x7FFFu;
  // Normal: exponent and mantissa move up 13 bits; the exponent bias changes
  // from 15 to 127.
  uint32_t normal = (magnitude << 13) + (uint32_t(127 - 15) << 23);
  // Inf and NaN: the all-ones exponent; a NaN gets the quiet bit.
  uint32_t special = 0x7F800000u | (magnitude << 13) |
                     (magnitude > 0x7C00u ? 0x00400000u : 0u);
  // Subnormal (and zero): mantissa * 2^-24, exact in float arithmetic.
  uint32_t subnormal = floatBits(static_cast<float>(magnitude) * 0x1p-24f);
  uint32_t bits = magnitude >= 0x7C00u   ? special
                  : magnitude >= 0x0400u ? normal
                                         : subnormal;
  return floatFromBits(sign | bits);
}

/// float → float16, rounded to nearest even.
AOA_HOST_DEVICE inline uint16_t floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  // |value| >= 2^-14 (normal results, overflow and Inf): rebias the exponent
  // and round away the low 13 mantissa bits to nearest even. Everything from
  // 65520 up (Inf included) lands on or beyond the Inf pattern 0x7C00 and is
  // clamped to it.
  uint32_t rebiased = magnitude - (uint32_t(127 - 15) << 23);
  uint32_t rounded = (rebiased + 0x0FFFu + ((rebiased >> 13) & 1u)) >> 13;
  uint32_t normal = rounded < 0x7C00u ? rounded : 0x7C00u;
  // |value| < 2^-14 (subnormal results): adding 0.5 makes the hardware round
  // |value| to a multiple of 2^-24 (0.5's ulp, the float16 subnormal step),
  // ties to even; the mantissa then is the float16's bits. Rounding up to
  // 2^-14 gives 0x400, which is the right encoding of the smallest normal.
  uint32_t subnormal =
      floatBits(floatFromBits(magnitude) + 0.5f) - floatBits(0.5f);
  uint32_t nan = 0x7E00u | ((magnitude >> 13) & 0x03FFu);
  uint32_t result = magnitude > 0x7F800000u                   ? nan
                    : magnitude >= (uint32_t(127 - 14) << 23) ? normal
                                                              : subnormal;
  return static_cast<uint16_t>(sign | result);
}

/// bfloat16 → float, exact for every bit pattern (bfloat16 is the top half
/// of a float): a signalling NaN stays signalling, as in Paddle and PyTorch,
/// so bfloat16 data widened to float32 keeps all its bits.
AOA_HOST_DEVICE inline float bfloat16ToFloat(uint16_t value) {
  return floatFromBits(uint32_t(value) << 16);
}

/// float → bfloat16, rounded to nearest even. Rounding the low 16 bits away
/// by integer addition is correct for subnormals too (the formats share the
/// exponent), and a carry out of the mantissa becomes Inf on overflow.
AOA_HOST_DEVICE inline uint16_t floatToBFloat16(float value) {
  uint32_t bits = floatBits(value);
  uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  uint32_t nan = (bits >> 16) | 0x0040u;
  return static_cast<uint16_t>((bits & 0x7FFFFFFFu) > 0x7F800000u ? nan
                                                                  : rounded);
}

/// The NaN that float NaN `bits` becomes as a double: the same sign, the
/// payload in the top mantissa bits, made quiet. This is IEEE convertFormat
/// as x86-64 and AArch64 do it for a C++ conversion.
AOA_HOST_DEVICE inline double doubleFromFloatNaN(uint32_t bits) {
  return doubleFromBits((uint64_t(bits & 0x80000000u) << 32) |
                        0x7FF8000000000000ull |
                        (uint64_t(bits & 0x007FFFFFu) << 29));
}

/// The NaN that double NaN `bits` becomes as a float: the same sign, the
/// top bits of the payload, made quiet (as doubleFromFloatNaN).
AOA_HOST_DEVICE inline float floatFromDoubleNaN(uint64_t bits) {
  return floatFromBits((uint32_t(bits >> 32) & 0x80000000u) | 0x7FC00000u |
                       (uint32_t(bits >> 29) & 0x007FFFFFu));
}

/// float → double, exact. On the GPU every NaN result of the hardware
/// conversion may be one canonical NaN, so there a NaN is built from its
/// bits instead, giving what the CPU gives.
AOA_HOST_DEVICE inline double floatToDouble(float value) {
#ifdef __CUDA_ARCH__
  uint32_t bits = floatBits(value);
  return (bits & 0x7FFFFFFFu) > 0x7F800000u ? doubleFromFloatNaN(bits)
                                            : static_cast<double>(value);
#else
  return static_cast<double>(value);
#endif
}

/// double → float, rounded to nearest even; NaNs as floatToDouble.
AOA_HOST_DEVICE inline float doubleToFloat(double value) {
#ifdef __CUDA_ARCH__
  uint64_t bits = doubleBits(value);
  return (bits & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull
             ? floatFromDoubleNaN(bits)
             : static_cast<float>(value);
#else
  return static_cast<float>(value);
#endif
}

/// double → float rounded to odd: toward zero, then the last mantissa bit
/// set if anything was cut off. Rounding to odd with at least two spare bits
/// and then to nearest even gives the correctly rounded result, so double →
/// 16-bit conversions go through this without double rounding (float has 24
/// bits; float16 needs 11 + 2, bfloat16 8 + 2, also in the subnormal range).
AOA_HOST_DEVICE inline float doubleToFloatRoundToOdd(double value) {
  float nearest = doubleToFloat(value);
  double back = static_cast<double>(nearest);
  bool inexact = back != value && value == value;
#ifdef __CUDA_ARCH__
  bool roundedAway = ::fabs(back) > ::fabs(value); // CUDA's device fabs
#else
  bool roundedAway = std::fabs(back) > std::fabs(value);
#endif
  uint32_t bits = floatBits(nearest);
  bits -= (inexact && roundedAway) ? 1u : 0u;
  bits |= inexact ? 1u : 0u;
  return floatFromBits(bits);
}

/// double → float16, rounded to nearest even (once).
AOA_HOST_DEVICE inline uint16_t doubleToHalf(double value) {
  return floatToHalf(doubleToFloatRoundToOdd(value));
}

/// double → bfloat16, rounded to nearest even (once).
AOA_HOST_DEVICE inline uint16_t doubleToBFloat16(double value) {
  return floatToBFloat16(doubleToFloatRoundToOdd(value));
}

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_FLOATCONVERSION_H
