//===- FastCastElements.h - One element of the vector casts -----*- C++ -*-===//
//
// Private to the runtime library (FastCast.h). The conversions of
// FloatConversion.h and Float8Conversion.h rewritten on signed 32-bit
// integers with mask selects, which GCC vectorizes for baseline x86-64: SSE2
// has neither unsigned compares nor unsigned int -> float conversions, and
// a select between float results is otherwise a branch (-ftrapping-math
// keeps float arithmetic from being speculated). Each gives exactly the
// bits of the function it is named after (FastCastTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTELEMENTS_H
#define AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTELEMENTS_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace aoa::runtime::fastcast {

/// Loads and stores that need no alignment (plain moves once vectorized).
template <typename T> inline T load(const std::byte *at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}
template <typename T> inline void store(std::byte *at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

inline int32_t bitsOf(float value) {
  int32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
inline float floatOf(int32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// `condition ? ifTrue : ifFalse` as masks, which the vectorizer always
/// turns into vector and/andnot/or.
inline int32_t select(bool condition, int32_t ifTrue, int32_t ifFalse) {
  int32_t mask = -int32_t(condition);
  return (ifTrue & mask) | (ifFalse & ~mask);
}

/// The bits of |value| + `magic` less those of `magic`, where `magic`'s ulp
/// is the target's subnormal step: the float addition rounds |value| to
/// nearest even there, and the difference is the target's bits. A float32
/// subnormal is replaced by zero first, which changes no result (it is far
/// below half a step) but keeps the addition off the slow microcode path
/// that x86 CPUs take for subnormal operands.
inline int32_t subnormalByAddition(int32_t magnitude, float magic) {
  int32_t normalInput = select(magnitude > 0x007FFFFF, magnitude, 0);
  return bitsOf(floatOf(normalInput) + magic) - bitsOf(magic);
}

/// The bits of aoa::runtime::halfToFloat.
inline float halfToFloat(uint16_t half) {
  int32_t sign = int32_t(half & 0x8000) << 16;
  int32_t magnitude = half & 0x7FFF;
  int32_t normal = (magnitude << 13) + ((127 - 15) << 23);
  int32_t special = 0x7F800000 | (magnitude << 13) |
                    select(magnitude > 0x7C00, 0x00400000, 0);
  int32_t subnormal = bitsOf(static_cast<float>(magnitude) * 0x1p-24f);
  int32_t bits = select(magnitude >= 0x7C00, special,
                        select(magnitude >= 0x0400, normal, subnormal));
  return floatOf(sign | bits);
}

/// The bits of aoa::runtime::floatToHalf.
inline uint16_t floatToHalf(float value) {
  int32_t bits = bitsOf(value);
  int32_t sign = (bits >> 16) & 0x8000;
  int32_t magnitude = bits & 0x7FFFFFFF;
  int32_t rebiased = magnitude - ((127 - 15) << 23);
  int32_t rounded = (rebiased + 0x0FFF + ((rebiased >> 13) & 1)) >> 13;
  int32_t normal = select(rounded < 0x7C00, rounded, 0x7C00);
  int32_t subnormal = subnormalByAddition(magnitude, 0.5f);
  int32_t nan = 0x7E00 | ((magnitude >> 13) & 0x03FF);
  int32_t result =
      select(magnitude > 0x7F800000, nan,
             select(magnitude >= ((127 - 14) << 23), normal, subnormal));
  return static_cast<uint16_t>(sign | result);
}

/// The bits of aoa::runtime::bfloat16ToFloat.
inline float bfloat16ToFloat(uint16_t value) {
  return floatOf(int32_t(uint32_t(value) << 16));
}

/// The bits of aoa::runtime::floatToBFloat16.
inline uint16_t floatToBFloat16(float value) {
  uint32_t bits = uint32_t(bitsOf(value));
  int32_t rounded = int32_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  int32_t nan = int32_t(bits >> 16) | 0x0040;
  return static_cast<uint16_t>(
      select(int32_t(bits & 0x7FFFFFFFu) > 0x7F800000, nan, rounded));
}

/// The bits of aoa::runtime::floatToFloat8E4M3.
inline uint8_t floatToFloat8E4M3(float value) {
  int32_t bits = bitsOf(value);
  int32_t sign = (bits >> 24) & 0x80;
  int32_t magnitude = bits & 0x7FFFFFFF;
  int32_t rebiased = magnitude - ((127 - 7) << 23);
  int32_t normal = (rebiased + 0x7FFFF + ((rebiased >> 20) & 1)) >> 20;
  int32_t subnormal = subnormalByAddition(magnitude, 0x1p14f);
  int32_t result =
      select(magnitude >= 0x43F00000, 0x7F,
             select(magnitude >= ((127 - 6) << 23), normal, subnormal));
  return static_cast<uint8_t>(sign | result);
}

/// The bits of aoa::runtime::floatToFloat8E5M2.
inline uint8_t floatToFloat8E5M2(float value) {
  int32_t bits = bitsOf(value);
  int32_t sign = (bits >> 24) & 0x80;
  int32_t magnitude = bits & 0x7FFFFFFF;
  int32_t rebiased = magnitude - ((127 - 15) << 23);
  int32_t rounded = (rebiased + 0xFFFFF + ((rebiased >> 21) & 1)) >> 21;
  int32_t normal = select(rounded < 0x7C, rounded, 0x7C);
  int32_t subnormal = subnormalByAddition(magnitude, 0x1p7f);
  int32_t result =
      select(magnitude > 0x7F800000, 0x7F,
             select(magnitude >= ((127 - 14) << 23), normal, subnormal));
  return static_cast<uint8_t>(sign | result);
}

/// The bits of aoa::runtime::floatToFloat8E8M0.
inline uint8_t floatToFloat8E8M0(float value) {
  int32_t bits = bitsOf(value);
  int32_t exponent = (bits >> 23) & 0xFF;
  int32_t guard = (bits >> 22) & 1;
  int32_t rest = select((bits & 0x003FFFFF) != 0, 1, 0);
  int32_t roundUp = guard & (rest | select(exponent > 0, 1, 0));
  return static_cast<uint8_t>(
      select(exponent == 0xFF, 0xFF, exponent + roundUp));
}

} // namespace aoa::runtime::fastcast

#endif // AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTELEMENTS_H
