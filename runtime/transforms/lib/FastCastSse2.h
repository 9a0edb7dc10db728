//===- FastCastSse2.h - SSE2 kernels of the vector casts --------*- C++ -*-===//
//
// Private to the runtime library (FastCast.h), and empty without SSE2. The
// conversions that GCC's vectorizer does badly, in SSE2 intrinsics: float16
// and bfloat16 to float32 (float16 mostly in 16-bit lanes), float32 to
// float16, bfloat16, e4m3fn and e5m2 (the vectorizer narrows to 16 bits
// early and spends twice the instructions on shuffles), and bfloat16 <->
// float16 and 16-bit -> FP8 in 16-bit lanes, with their subnormal results
// in float32 lanes. Each computes the bits of the scalar functions in
// FastCastElements.h, which are those of FloatConversion.h and
// Float8Conversion.h (FastCastTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTSSE2_H
#define AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTSSE2_H

#include "FastCastElements.h"
#include "aoa/ir/DType.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <algorithm>
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

inline __m128i splat16(int value) { return _mm_set1_epi16(int16_t(value)); }

/// halfToFloat on eight float16s, into the float32 bits of the first four
/// (`low`) and the last four (`high`). Most of it runs in 16-bit lanes (a
/// float32's top half is the sign, the rebiased exponent and 7 mantissa
/// bits; its bottom half the other 3), eight elements an instruction: a
/// subnormal or zero gets the exponent of 2^-14, which is then subtracted
/// in float32 (exact, and on normal operands only: no microcode assist);
/// Inf and NaN get the all-ones exponent, a NaN its quiet bit.
inline void halvesToFloat(__m128i half, __m128i &low, __m128i &high) {
  __m128i magnitude = _mm_and_si128(half, splat16(0x7FFF));
  __m128i sign = _mm_xor_si128(half, magnitude);
  __m128i subnormal = _mm_cmplt_epi16(magnitude, splat16(0x0400));
  __m128i special = _mm_cmpgt_epi16(magnitude, splat16(0x7BFF));
  __m128i nan = _mm_cmpgt_epi16(magnitude, splat16(0x7C00));
  // Exponent + (127 - 15), or + 1 more for a subnormal, or to 255.
  __m128i top =
      _mm_add_epi16(_mm_srli_epi16(magnitude, 3), splat16((127 - 15) << 7));
  top = _mm_add_epi16(top, _mm_and_si128(subnormal, splat16(1 << 7)));
  top = _mm_add_epi16(top, _mm_and_si128(special, splat16((127 - 15) << 7)));
  top = _mm_or_si128(top, _mm_and_si128(nan, splat16(0x0040)));
  __m128i bottom = _mm_slli_epi16(magnitude, 13);
  __m128i bias = _mm_and_si128(subnormal, splat16(0x3880)); // 2^-14's top
  __m128i zero = _mm_setzero_si128();
  auto finish = [&](__m128i bits, __m128i biasBits, __m128i signBits) {
    __m128 value = _mm_sub_ps(_mm_castsi128_ps(bits),
                              _mm_castsi128_ps(biasBits)); // x - 0 is x
    return _mm_or_si128(_mm_castps_si128(value), signBits);
  };
  low = finish(_mm_unpacklo_epi16(bottom, top), _mm_unpacklo_epi16(zero, bias),
               _mm_unpacklo_epi16(zero, sign));
  high = finish(_mm_unpackhi_epi16(bottom, top), _mm_unpackhi_epi16(zero, bias),
                _mm_unpackhi_epi16(zero, sign));
}

/// Widens the first count - count % 8 float16s or bfloat16s at `src`;
/// returns how many. With `Streaming`, `dst` is 16-byte aligned and written
/// with streaming stores (FastCast.h's castRun).
template <DType From, bool Streaming = false>
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
      halvesToFloat(halves, low, high);
    }
    if constexpr (Streaming) {
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 4 * i), low);
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 4 * i + 16), high);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 4 * i), low);
      _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 4 * i + 16), high);
    }
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

/// The subnormal results of narrowSixteenBit, without their sign, for the
/// source magnitudes `magnitude` below the smallest normal result (other
/// lanes get values never used), in 16-bit lanes. Through float32: a
/// bfloat16 is its top half and a float16 rebiased (as if normal: a
/// float16 subnormal, below 2^-14, still rounds to 0 in e4m3fn); the
/// float32 rounding by addition (roundedByAddition) then gives the bits,
/// exactly as FastCastElements.h does, 0 for magnitudes that round to
/// zero. A float16 subnormal (nonzero), to bfloat16, is its mantissa as a
/// float32 rounded to bfloat16, less 24 in the exponent (the scaling by
/// 2^-24 commutes with the rounding: the result is normal).
template <DType From, DType To>
inline __m128i subnormalLanes(__m128i magnitude) {
  __m128i zero = _mm_setzero_si128();
  __m128i low, high;
  if constexpr (From == DType::BF16) {
    low = _mm_unpacklo_epi16(zero, magnitude);
    high = _mm_unpackhi_epi16(zero, magnitude);
  } else {
    low = _mm_unpacklo_epi16(magnitude, zero);
    high = _mm_unpackhi_epi16(magnitude, zero);
  }
  if constexpr (To == DType::BF16) {
    auto rounded = [](__m128i mantissa) {
      __m128i bits = _mm_castps_si128(_mm_cvtepi32_ps(mantissa));
      __m128i lsb = _mm_and_si128(_mm_srli_epi32(bits, 16), splat(1));
      return _mm_srli_epi32(
          _mm_add_epi32(_mm_add_epi32(bits, splat(0x7FFF)), lsb), 16);
    };
    return _mm_sub_epi16(_mm_packs_epi32(rounded(low), rounded(high)),
                         splat16(24 << 7));
  } else {
    static_assert(To == DType::F16 || To == DType::F8E4M3 ||
                      To == DType::F8E5M2,
                  "no subnormal lanes for this cast");
    if constexpr (From == DType::F16) {
      low = _mm_add_epi32(_mm_slli_epi32(low, 13), splat((127 - 15) << 23));
      high = _mm_add_epi32(_mm_slli_epi32(high, 13), splat((127 - 15) << 23));
    }
    constexpr float magic = To == DType::F16      ? 0.5f
                            : To == DType::F8E4M3 ? 0x1p14f
                                                  : 0x1p7f;
    return _mm_packs_epi32(roundedByAddition(low, magic),
                           roundedByAddition(high, magic));
  }
}

/// Converts bfloat16 to float16, e4m3fn or e5m2, or float16 to bfloat16,
/// e4m3fn or e5m2, eight elements at a time in 16-bit lanes without going
/// through float32. Both 16-bit formats are a float32's top bits (float16
/// after rebiasing), so the float32 code's rounding, whose low bits are
/// then zero, reduces to 16-bit arithmetic: for normal results, overflow,
/// NaN, and values that round to zero. Subnormal results (subnormalLanes)
/// are computed in float32 lanes and selected, for the vectors of a chunk
/// of 64 elements where one has a lane that needs them.
/// Returns how many elements were done (count - count % 8). With
/// `Streaming` (2-byte results only), `dst` is 16-byte aligned and written
/// with streaming stores (FastCast.h's castRun).
template <DType From, DType To, bool Streaming = false>
size_t narrowSixteenBit(const std::byte *src, std::byte *dst, size_t count) {
  static_assert(hasSixteenBitLanes(From, To), "no 16-bit lane conversion");
  static_assert(!Streaming || sizeof(typename ElementStorage<To>::type) == 2,
                "streamed 16-bit results only");
  // The magnitudes, exclusive, between which the result is subnormal:
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
  // Lanes whose result is subnormal.
  auto subnormalRange = [](__m128i magnitude) {
    return _mm_and_si128(_mm_cmpgt_epi16(magnitude, splat16(largestZero)),
                         _mm_cmplt_epi16(magnitude, splat16(smallestNormal)));
  };
  // One vector at `i`, with or without the subnormal results.
  auto convert = [&](size_t i, auto subnormalsTag) {
    constexpr bool subnormals = decltype(subnormalsTag)::value;
    __m128i value = loadLanes(src + 2 * i);
    __m128i magnitude = _mm_and_si128(value, splat16(0x7FFF));
    __m128i sign = _mm_andnot_si128(magnitude, value);
    __m128i result;
    __m128i isNaN =
        _mm_cmpgt_epi16(magnitude, splat16(fromBF16 ? 0x7F80 : 0x7C00));
    if constexpr (fromBF16 && To == DType::F16) {
      // Exact: 7 mantissa bits into 10; overflow (Inf too) from 65536.
      __m128i normal =
          _mm_slli_epi16(_mm_sub_epi16(magnitude, splat16((127 - 15) << 7)), 3);
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
    if constexpr (smallestNormal > 0 && To != DType::BF16 && subnormals) {
      // The subnormal rounding also gives 0 to the magnitudes below.
      result = select(_mm_cmplt_epi16(magnitude, splat16(smallestNormal)),
                      subnormalLanes<From, To>(magnitude), result);
    } else {
      if constexpr (largestZero > 0 || To == DType::BF16)
        result = _mm_andnot_si128(
            _mm_cmplt_epi16(magnitude, splat16(largestZero + 1)), result);
      if constexpr (smallestNormal > 0 && subnormals)
        result = select(subnormalRange(magnitude),
                        subnormalLanes<From, To>(magnitude), result);
    }
    if constexpr (sizeof(typename ElementStorage<To>::type) == 2)
      result = _mm_or_si128(result, sign);
    else
      result = _mm_or_si128(result, _mm_srli_epi16(sign, 8));
    if constexpr (sizeof(typename ElementStorage<To>::type) == 2 && Streaming)
      _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 2 * i), result);
    else if constexpr (sizeof(typename ElementStorage<To>::type) == 2)
      _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 2 * i), result);
    else
      _mm_storel_epi64(reinterpret_cast<__m128i *>(dst + i),
                       _mm_packus_epi16(result, result));
  };
  // One branch per chunk of 8 vectors, on whether any lane of it has a
  // subnormal result: weights have few such chunks, random patterns many
  // (a quarter of their vectors), and either way the branch is predicted.
  constexpr size_t kChunk = 64;
  size_t whole = count - count % 8;
  for (size_t i = 0; i < whole;) {
    size_t end = std::min(i + kChunk, whole);
    bool subnormals = false;
    if constexpr (smallestNormal > 0) {
      __m128i seen = _mm_setzero_si128();
      for (size_t k = i; k < end; k += 8)
        seen =
            _mm_or_si128(seen, subnormalRange(_mm_and_si128(
                                   loadLanes(src + 2 * k), splat16(0x7FFF))));
      subnormals = _mm_movemask_epi8(seen) != 0;
    }
    if (subnormals)
      for (; i < end; i += 8)
        convert(i, std::true_type());
    else
      for (; i < end; i += 8)
        convert(i, std::false_type());
  }
  return whole;
}
} // namespace sse2

} // namespace aoa::runtime::fastcast

#endif // __SSE2__

#endif // AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTSSE2_H
