//===- SpecialValues.h - Element bytes that stress conversions --*- C++ -*-===//
//
// Random elements for copy tests whose casts must match the CPU bit for
// bit: floating elements are drawn mostly from the hard cases of
// conversions (NaNs with payloads, signalling and quiet; ±Inf; ±0;
// subnormals of every format; exact ties and their neighbours for every
// narrowing; the overflow thresholds), the rest at random.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_SPECIALVALUES_H
#define AOA_TEST_UNIT_SPECIALVALUES_H

#include "aoa/ir/DType.h"

#include <cstdint>
#include <cstring>
#include <random>

namespace aoa::test {

/// A float32 bit pattern from the hard cases.
inline uint32_t specialFloatBits(std::mt19937_64 &rng) {
  uint32_t sign = (rng() & 1) ? 0x80000000u : 0u;
  uint32_t random = uint32_t(rng());
  switch (rng() % 12) {
  case 0: // NaN, any payload (quiet or signalling)
    return sign | 0x7F800000u | (1u + random % 0x7FFFFFu);
  case 1: // ±Inf, ±0
    return sign | ((random & 1) ? 0x7F800000u : 0u);
  case 2: // float32 subnormal
    return sign | (1u + random % 0x7FFFFFu);
  case 3: // a bfloat16 tie or one ulp beside it
    return sign | (((random & 0x7FFF0000u) | 0x8000u) + (rng() % 3) - 1);
  case 4: { // a float16 tie in the normal range (exponents 2^-14..2^15)
    uint32_t exponent = 113 + random % 30;
    return sign | exponent << 23 | ((uint32_t(rng()) & 0x7FE000u) | 0x1000u);
  }
  case 5: { // a float16 subnormal tie ((k + 1/2) * 2^-24) or nearly one
    float value = (float(random % 1024) + 0.5f) * 0x1p-24f;
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return sign | (bits + (rng() % 3) - 1);
  }
  case 6: { // near float16's overflow threshold 65520 and largest 65504
    const float values[] = {65504.0f,       65519.0f,       65520.0f,
                            65520.004f,     65535.0f,       65536.0f,
                            6.1035156e-05f, 5.9604645e-08f, 2.9802322e-08f,
                            2.9802326e-08f};
    float value = values[random % 10];
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return sign | bits;
  }
  case 7: // near float32's largest value (bfloat16 overflows into Inf)
    return sign | (0x7F7FFFFFu - random % 0x10000u);
  default: // ordinary numbers, and random patterns
    return (random & 1) ? random
                        : sign | (uint32_t(100 + random % 56) << 23 |
                                  (uint32_t(rng()) & 0x7FFFFFu));
  }
}

/// A float64 bit pattern from the hard cases.
inline uint64_t specialDoubleBits(std::mt19937_64 &rng) {
  uint64_t sign = (rng() & 1) ? uint64_t(1) << 63 : 0;
  uint64_t random = rng();
  const uint64_t mantissa = (uint64_t(1) << 52) - 1;
  switch (rng() % 12) {
  case 0: // NaN, any payload, also payloads only in bits a float drops
    return sign | uint64_t(0x7FF) << 52 |
           (1 + random % mantissa) >> ((random >> 60) & 1 ? 30 : 0);
  case 1: // ±Inf, ±0
    return sign | ((random & 1) ? uint64_t(0x7FF) << 52 : 0);
  case 2: // float64 subnormal
    return sign | (1 + random % mantissa);
  case 3: { // a float32 tie (also in float32's subnormal range) or beside it
    uint64_t exponent = 1023 - 149 + random % (128 + 149);
    uint64_t tie = exponent << 52 |
                   (rng() & mantissa & ~((uint64_t(1) << 29) - 1)) |
                   uint64_t(1) << 28;
    return sign | (tie + (rng() % 3) - 1);
  }
  case 4:
  case 5: { // a float16 or bfloat16 tie as a double, or a double ulp beside
            // it: rounding through float32 must not round twice
    uint32_t floatBits = specialFloatBits(rng) & 0x7FFFFFFFu;
    float value;
    std::memcpy(&value, &floatBits, 4);
    double wide = value;
    uint64_t bits;
    std::memcpy(&bits, &wide, 8);
    if ((bits >> 52) != 0x7FF)
      bits += (rng() % 3) - 1;
    return sign | bits;
  }
  case 6: // near float32's largest value and the overflow tie 2^128 - 2^103
    return sign | ((uint64_t(1023 + 127) << 52 | mantissa) -
                   ((random % 2) ? 0 : (uint64_t(1) << 28)) + (rng() % 3) - 1);
  default: // ordinary numbers, and random patterns
    return (random & 1) ? random
                        : sign | (uint64_t(1000 + random % 50) << 52 |
                                  (rng() & mantissa));
  }
}

/// Fills `count` elements of `dtype` at `bytes`: hard cases for floating
/// dtypes, random bits otherwise.
inline void fillSpecialElements(DType dtype, unsigned char *bytes, size_t count,
                                std::mt19937_64 &rng) {
  size_t size = dtypeSize(dtype);
  for (size_t i = 0; i < count; ++i) {
    unsigned char *at = bytes + i * size;
    uint64_t bits = rng();
    switch (dtype) {
    case DType::F64:
      bits = specialDoubleBits(rng);
      break;
    case DType::F32:
      bits = specialFloatBits(rng);
      break;
    case DType::F16:
    case DType::BF16: // every pattern is a hard case somewhere
      if (rng() % 4 == 0)
        bits = (rng() % 2 ? 0x7C00u : 0x7F80u) | (rng() & 0x83FFu);
      break;
    default:
      break;
    }
    std::memcpy(at, &bits, size); // little-endian: the low bytes
  }
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_SPECIALVALUES_H
