//===- FastCastSse2.h - SSE2 kernels of the vector casts --------*- C++ -*-===//
//
// Private to the runtime library (FastCast.h), and empty without SSE2. The
// conversions that GCC's vectorizer does badly, in SSE2 intrinsics: float16
// and bfloat16 to float32, float32 to float16, bfloat16, e4m3fn and e5m2
// (the vectorizer narrows to 16 bits early and spends twice the
// instructions on shuffles), and bfloat16 <-> float16 and 16-bit -> FP8 in
// 16-bit lanes. Each computes the bits of the scalar functions in
// FastCastElements.h, which are those of FloatConversion.h and
// Float8Conversion.h (FastCastTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTSSE2_H
#define AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTSSE2_H

#include "FastCastElements.h"
#include "aoa/ir/DType.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>

namespace aoa::runtime::fastcast {

namespace sse2 {
inline __m128i splat(int32_t value) { return _mm_set1_epi32(value); }
/// mask ? ifTrue : ifFalse, lane by lane.
inline __m128i select(__m128i mask, __m128i ifTrue, __m128i ifFalse) {
  return _mm_or_si128(_mm_and_si128(mask, ifTrue),
                      _mm_andnot_si128(mask, ifFalse));
}
inline __m128i loadLanes(const std::byte *at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i *>(at));
}

/// halfToFloat on four float16s held in the low halves of 32-bit lanes.
inline __m128i halfLanesToFloat(__m128i half) {
  __m128i magnitude = _mm_and_si128(half, splat(0x7FFF));
  __m128i sign = _mm_slli_epi32(_mm_xor_si128(half, magnitude), 16);
  __m128i shifted = _mm_slli_epi32(magnitude, 13);
  __m128i normal = _mm_add_epi32(shifted, splat((127 - 15) << 23));
  __m128i quiet = _mm_and_si128(_mm_cmpgt_epi32(magnitude, splat(0x7C00)),
                                splat(0x00400000));
  __m128i special =
      _mm_or_si128(_mm_or_si128(shifted, splat(0x7F800000)), quiet);
  __m128i subnormal = _mm_castps_si128(
      _mm_mul_ps(_mm_cvtepi32_ps(magnitude), _mm_set1_ps(0x1p-24f)));
  __m128i result =
      select(_mm_cmpgt_epi32(magnitude, splat(0x03FF)), normal, subnormal);
  result = select(_mm_cmpgt_epi32(magnitude, splat(0x7BFF)), special, result);
  return _mm_or_si128(sign, result);
}

/// Widens the first count - count % 8 float16s or bfloat16s at `src`;
/// returns how many.
template <DType From>
size_t widenToFloat(const std::byte *src, std::byte *dst, size_t count) {
  size_t whole = count - count % 8;
  __m128i zero = _mm_setzero_si128();
  for (size_t i = 0; i < whole; i += 8) {
    __m128i halves = loadLanes(src + 2 * i);
    __m128i low, high;
    if constexpr (From == DType::BF16) {
      // The bfloat16 bits become the top half of each lane.
      low = _mm_unpacklo_epi16(zero, halves);
      high = _mm_unpackhi_epi16(zero, halves);
    } else {
      low = halfLanesToFloat(_mm_unpacklo_epi16(halves, zero));
      high = halfLanesToFloat(_mm_unpackhi_epi16(halves, zero));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 4 * i), low);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 4 * i + 16), high);
  }
  return whole;
}

// Narrowing from float32: floatToBFloat16, floatToHalf (without the sign,
// which the caller adds after packing), floatToFloat8E4M3 and
// floatToFloat8E5M2 on four floats' bits (narrowLanes), giving the results
// in 32-bit lanes: the same operations as FastCastElements.h's.

/// subnormalByAddition on four lanes.
inline __m128i roundedByAddition(__m128i magnitude, float magic) {
  __m128i normalInput = _mm_cmpgt_epi32(magnitude, splat(0x007FFFFF));
  __m128 sum =
      _mm_add_ps(_mm_castsi128_ps(_mm_and_si128(magnitude, normalInput)),
                 _mm_set1_ps(magic));
  return _mm_sub_epi32(_mm_castps_si128(sum), splat(bitsOf(magic)));
}
/// (rebiased + half - 1 + lsb) >> `Shift`: rounding to nearest even.
template <int Shift> inline __m128i roundedShift(__m128i rebiased) {
  __m128i lsb = _mm_and_si128(_mm_srli_epi32(rebiased, Shift), splat(1));
  __m128i sum = _mm_add_epi32(_mm_add_epi32(rebiased, lsb),
                              splat((1 << (Shift - 1)) - 1));
  return _mm_srli_epi32(sum, Shift);
}

template <DType To> inline __m128i narrowLanes(__m128i bits) {
  __m128i magnitude = _mm_and_si128(bits, splat(0x7FFFFFFF));
  if constexpr (To == DType::BF16) {
    __m128i high = _mm_srli_epi32(bits, 16);
    __m128i lsb = _mm_and_si128(high, splat(1));
    __m128i rounded = _mm_srli_epi32(
        _mm_add_epi32(_mm_add_epi32(bits, splat(0x7FFF)), lsb), 16);
    __m128i nan = _mm_or_si128(high, splat(0x0040));
    return select(_mm_cmpgt_epi32(magnitude, splat(0x7F800000)), nan, rounded);
  } else if constexpr (To == DType::F16) {
    // Without the sign, which narrowFromFloat adds after packing.
    __m128i rounded =
        roundedShift<13>(_mm_sub_epi32(magnitude, splat((127 - 15) << 23)));
    __m128i normal =
        select(_mm_cmpgt_epi32(rounded, splat(0x7C00)), splat(0x7C00), rounded);
    __m128i subnormal = roundedByAddition(magnitude, 0.5f);
    __m128i nan =
        _mm_or_si128(splat(0x7E00), _mm_and_si128(_mm_srli_epi32(magnitude, 13),
                                                  splat(0x03FF)));
    __m128i result =
        select(_mm_cmpgt_epi32(magnitude, splat(((127 - 14) << 23) - 1)),
               normal, subnormal);
    return select(_mm_cmpgt_epi32(magnitude, splat(0x7F800000)), nan, result);
  } else if constexpr (To == DType::F8E4M3) {
    __m128i sign = _mm_and_si128(_mm_srli_epi32(bits, 24), splat(0x80));
    __m128i normal =
        roundedShift<20>(_mm_sub_epi32(magnitude, splat((127 - 7) << 23)));
    __m128i subnormal = roundedByAddition(magnitude, 0x1p14f);
    __m128i result =
        select(_mm_cmpgt_epi32(magnitude, splat(((127 - 6) << 23) - 1)), normal,
               subnormal);
    result = select(_mm_cmpgt_epi32(magnitude, splat(0x43F00000 - 1)),
                    splat(0x7F), result);
    return _mm_or_si128(sign, result);
  } else {
    static_assert(To == DType::F8E5M2, "no SSE2 narrowing to this dtype");
    __m128i sign = _mm_and_si128(_mm_srli_epi32(bits, 24), splat(0x80));
    __m128i rounded =
        roundedShift<21>(_mm_sub_epi32(magnitude, splat((127 - 15) << 23)));
    __m128i normal =
        select(_mm_cmpgt_epi32(rounded, splat(0x7C)), splat(0x7C), rounded);
    __m128i subnormal = roundedByAddition(magnitude, 0x1p7f);
    __m128i result =
        select(_mm_cmpgt_epi32(magnitude, splat(((127 - 14) << 23) - 1)),
               normal, subnormal);
    result = select(_mm_cmpgt_epi32(magnitude, splat(0x7F800000)), splat(0x7F),
                    result);
    return _mm_or_si128(sign, result);
  }
}

/// Narrows the first count - count % 16 floats at `src`; returns how many.
template <DType To>
size_t narrowFromFloat(const std::byte *src, std::byte *dst, size_t count) {
  size_t whole = count - count % 16;
  for (size_t i = 0; i < whole; i += 16) {
    const std::byte *from = src + 4 * i;
    __m128i bits[4] = {loadLanes(from), loadLanes(from + 16),
                       loadLanes(from + 32), loadLanes(from + 48)};
    __m128i a = narrowLanes<To>(bits[0]), b = narrowLanes<To>(bits[1]);
    __m128i c = narrowLanes<To>(bits[2]), d = narrowLanes<To>(bits[3]);
    if constexpr (To == DType::F16) {
      // Results below 0x8000, which the saturating pack keeps; the signs
      // are the top bits of the floats' sign-extended high halves.
      auto signs = [](__m128i x, __m128i y) {
        return _mm_and_si128(
            _mm_packs_epi32(_mm_srai_epi32(x, 16), _mm_srai_epi32(y, 16)),
            _mm_set1_epi16(int16_t(0x8000)));
      };
      std::byte *to = dst + 2 * i;
      _mm_storeu_si128(
          reinterpret_cast<__m128i *>(to),
          _mm_or_si128(_mm_packs_epi32(a, b), signs(bits[0], bits[1])));
      _mm_storeu_si128(
          reinterpret_cast<__m128i *>(to + 16),
          _mm_or_si128(_mm_packs_epi32(c, d), signs(bits[2], bits[3])));
    } else if constexpr (To == DType::BF16) {
      // 16-bit results, sign-extended so that the saturating pack keeps
      // them.
      auto widen = [](__m128i v) {
        return _mm_srai_epi32(_mm_slli_epi32(v, 16), 16);
      };
      std::byte *to = dst + 2 * i;
      _mm_storeu_si128(reinterpret_cast<__m128i *>(to),
                       _mm_packs_epi32(widen(a), widen(b)));
      _mm_storeu_si128(reinterpret_cast<__m128i *>(to + 16),
                       _mm_packs_epi32(widen(c), widen(d)));
    } else {
      // Results 0..255: both packs keep them.
      _mm_storeu_si128(
          reinterpret_cast<__m128i *>(dst + i),
          _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
    }
  }
  return whole;
}

/// Whether narrowSixteenBit converts `From` to `To` in 16-bit lanes.
constexpr bool hasSixteenBitLanes(DType from, DType to) {
  return (from == DType::BF16 &&
          (to == DType::F16 || to == DType::F8E4M3 || to == DType::F8E5M2)) ||
         (from == DType::F16 &&
          (to == DType::BF16 || to == DType::F8E4M3 || to == DType::F8E5M2));
}

/// Converts bfloat16 to float16, e4m3fn or e5m2, or float16 to bfloat16,
/// e4m3fn or e5m2, eight elements at a time in 16-bit lanes without going
/// through float32. Both 16-bit formats are a float32's top bits (float16
/// after rebiasing), so the float32 code's rounding, whose low bits are
/// then zero, reduces to 16-bit arithmetic: for normal results, overflow,
/// NaN, and values that round to zero. A vector with a lane whose result
/// needs the subnormal rounding (rare in weights) goes through float32.
/// Returns how many elements were done (count - count % 8).
template <DType From, DType To>
size_t narrowSixteenBit(const std::byte *src, std::byte *dst, size_t count) {
  static_assert(hasSixteenBitLanes(From, To), "no 16-bit lane conversion");
  auto splat16 = [](int value) { return _mm_set1_epi16(int16_t(value)); };
  // The magnitudes, exclusive, between which the float32 path is taken:
  // above the largest that rounds to zero, below the smallest normal
  // result (as source bit patterns).
  constexpr bool fromBF16 = From == DType::BF16;
  constexpr int16_t largestZero = fromBF16 ? (To == DType::F16      ? 0x3300
                                              : To == DType::F8E4M3 ? 0x3A80
                                                                    : 0x3700)
                                           : (To == DType::F8E4M3 ? 0x1400 : 0);
  constexpr int16_t smallestNormal =
      fromBF16 ? (To == DType::F8E4M3 ? 0x3C80 : 0x3880)
               : (To == DType::BF16     ? 0x0400
                  : To == DType::F8E4M3 ? 0x2400
                                        : 0);
  // Rounds away the low `Shift` bits of `rebiased` to nearest even.
  auto roundedShift = [&](__m128i rebiased, auto shiftTag) {
    constexpr int shift = decltype(shiftTag)::value;
    __m128i lsb = _mm_and_si128(_mm_srli_epi16(rebiased, shift), splat16(1));
    return _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(rebiased, lsb),
                                        splat16((1 << (shift - 1)) - 1)),
                          shift);
  };
  size_t whole = count - count % 8;
  __m128i zero = _mm_setzero_si128();
  for (size_t i = 0; i < whole; i += 8) {
    __m128i value = loadLanes(src + 2 * i);
    __m128i magnitude = _mm_and_si128(value, splat16(0x7FFF));
    __m128i sign = _mm_andnot_si128(magnitude, value);
    __m128i result;
    bool subnormal = false;
    if constexpr (smallestNormal > 0) {
      __m128i inRange =
          _mm_and_si128(_mm_cmpgt_epi16(magnitude, splat16(largestZero)),
                        _mm_cmplt_epi16(magnitude, splat16(smallestNormal)));
      subnormal = _mm_movemask_epi8(inRange) != 0;
    }
    if (subnormal) {
      // Through float32 (narrowLanes), for the whole vector.
      __m128i low, high;
      if constexpr (fromBF16) {
        low = _mm_unpacklo_epi16(zero, value);
        high = _mm_unpackhi_epi16(zero, value);
      } else {
        low = halfLanesToFloat(_mm_unpacklo_epi16(value, zero));
        high = halfLanesToFloat(_mm_unpackhi_epi16(value, zero));
      }
      low = narrowLanes<To>(low);
      high = narrowLanes<To>(high);
      if constexpr (To == DType::BF16) {
        // Sign-extended so that the saturating pack keeps the sign bit.
        low = _mm_srai_epi32(_mm_slli_epi32(low, 16), 16);
        high = _mm_srai_epi32(_mm_slli_epi32(high, 16), 16);
      }
      result = _mm_packs_epi32(low, high);
      if constexpr (To == DType::F16)
        result = _mm_or_si128(result, sign); // narrowLanes leaves it out
    } else {
      __m128i isNaN =
          _mm_cmpgt_epi16(magnitude, splat16(fromBF16 ? 0x7F80 : 0x7C00));
      if constexpr (fromBF16 && To == DType::F16) {
        // Exact: 7 mantissa bits into 10; overflow (Inf too) from 65536.
        __m128i normal = _mm_slli_epi16(
            _mm_sub_epi16(magnitude, splat16((127 - 15) << 7)), 3);
        __m128i nan = _mm_or_si128(
            splat16(0x7E00),
            _mm_slli_epi16(_mm_and_si128(magnitude, splat16(0x7F)), 3));
        result = select(_mm_cmpgt_epi16(magnitude, splat16(0x4780 - 1)),
                        splat16(0x7C00), normal);
        result = select(isNaN, nan, result);
      } else if constexpr (To == DType::BF16) {
        // float16 -> bfloat16: 10 mantissa bits rounded to 7, rebiased;
        // Inf stays Inf, a NaN keeps its top payload bits, made quiet.
        __m128i normal = _mm_add_epi16(
            roundedShift(magnitude, std::integral_constant<int, 3>()),
            splat16((127 - 15) << 7));
        __m128i nan = _mm_or_si128(
            splat16(0x7FC0),
            _mm_and_si128(_mm_srli_epi16(magnitude, 3), splat16(0x7F)));
        result = select(_mm_cmpeq_epi16(magnitude, splat16(0x7C00)),
                        splat16(0x7F80), normal);
        result = select(isNaN, nan, result);
      } else if constexpr (To == DType::F8E4M3) {
        // NaN from 480 up (Inf and NaN too); the rounding itself gives
        // 0x7F (NaN) past 464.
        constexpr int shift = fromBF16 ? 4 : 7;
        __m128i normal = roundedShift(
            _mm_sub_epi16(magnitude,
                          splat16(fromBF16 ? (127 - 7) << 7 : 8 << 10)),
            std::integral_constant<int, shift>());
        result =
            select(_mm_cmpgt_epi16(magnitude,
                                   splat16(fromBF16 ? 0x43F0 - 1 : 0x5F80 - 1)),
                   splat16(0x7F), normal);
      } else {
        // e5m2: overflow (Inf too) gives Inf, NaN gives 0x7F. From
        // float16 (the same exponent) the rounding holds for subnormals
        // too.
        constexpr int shift = fromBF16 ? 5 : 8;
        __m128i rebiased =
            fromBF16 ? _mm_sub_epi16(magnitude, splat16((127 - 15) << 7))
                     : magnitude;
        __m128i normal =
            roundedShift(rebiased, std::integral_constant<int, shift>());
        result =
            select(isNaN, splat16(0x7F), _mm_min_epi16(normal, splat16(0x7C)));
      }
      if constexpr (largestZero > 0 || To == DType::BF16)
        result = _mm_andnot_si128(
            _mm_cmplt_epi16(magnitude, splat16(largestZero + 1)), result);
      if constexpr (sizeof(typename ElementStorage<To>::type) == 2)
        result = _mm_or_si128(result, sign);
      else
        result = _mm_or_si128(result, _mm_srli_epi16(sign, 8));
    }
    if constexpr (sizeof(typename ElementStorage<To>::type) == 2)
      _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 2 * i), result);
    else
      _mm_storel_epi64(reinterpret_cast<__m128i *>(dst + i),
                       _mm_packus_epi16(result, result));
  }
  return whole;
}
} // namespace sse2

} // namespace aoa::runtime::fastcast

#endif // __SSE2__

#endif // AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTSSE2_H
