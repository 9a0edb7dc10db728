//===- FastCastAvx2.cpp - AVX2 and F16C cast kernels ----------------------===//
//
// The kernels of FastCastAvx2.h. The file is compiled for baseline x86-64
// like the rest of the project; only the functions between the target
// pragmas below are compiled for AVX2 and F16C, and they are reached only
// through castWhole, which FastCast.h calls where isAvailable(). Every
// conversion below is exact or rounds as the element conversion does (the
// comments say why), so the results are its bits.
//
//===----------------------------------------------------------------------===//
#include "FastCastAvx2.h"

#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(AOA_FASTCAST_AVX2)
#include <immintrin.h>
#endif

namespace aoa::runtime::fastcast::avx2 {

#if defined(AOA_FASTCAST_AVX2)
namespace {

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c"))),             \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,f16c")
#endif

inline __m256i splat(int32_t value) { return _mm256_set1_epi32(value); }
inline __m256i splat8(int value) { return _mm256_set1_epi8(char(value)); }

inline __m128i load128(const std::byte *at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i *>(at));
}
inline __m128i load64(const std::byte *at) {
  return _mm_loadl_epi64(reinterpret_cast<const __m128i *>(at));
}

/// Eight float32 lanes of bits to bfloat16 in their low halves, as
/// floatToBFloat16: rounded to nearest even, a NaN keeps its top bits and
/// becomes quiet.
inline __m256i roundedToBFloat16(__m256i bits) {
  __m256i high = _mm256_srli_epi32(bits, 16);
  __m256i lsb = _mm256_and_si256(high, splat(1));
  __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_add_epi32(bits, splat(0x7FFF)), lsb), 16);
  __m256i isNaN = _mm256_cmpgt_epi32(_mm256_and_si256(bits, splat(0x7FFFFFFF)),
                                     splat(0x7F800000));
  __m256i nan = _mm256_or_si256(high, splat(0x0040));
  return _mm256_blendv_epi8(rounded, nan, isNaN);
}

/// Eight float32 lanes of bits to float16, rounded to nearest even (F16C
/// rounds to subnormals, zero and infinity as IEEE 754 does, and so does
/// floatToHalf); a NaN keeps its top payload bits and becomes quiet.
inline __m128i roundedToHalf(__m256i bits) {
  return _mm256_cvtps_ph(_mm256_castsi256_ps(bits),
                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/// Two vectors of eight 16-bit results held in 32-bit lanes (below 2^16)
/// as one vector of sixteen, in order.
inline __m256i packed(__m256i low, __m256i high) {
  // The pack works within 128-bit halves: its quarters are low[0:4],
  // high[0:4], low[4:8], high[4:8].
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(low, high),
                                  _MM_SHUFFLE(3, 1, 2, 0));
}

/// Thirty-two float8_e4m3fn bytes as the low (`low`) and high (`high`)
/// bytes of their bfloat16 (`To` BF16) or float16 (F16) bits, exact, in
/// byte lanes (thirty-two an instruction; F16C would meet e4m3fn's
/// subnormals as float16 subnormal operands, which measured slow): a normal
/// value's exponent and mantissa move up and are rebiased, which splits
/// into a shift for each byte (the 16-bit shifts' bits from the other byte
/// masked off) and an addition to the high one; the seven subnormal ones
/// (mantissa m, m * 2^-9) are looked up by m; the NaN (S.1111.111), which
/// the normal rule gives as 480, becomes float8E4M3ToFloat's 0x7FF00000
/// narrowed (bfloat16 0x7FF0, float16 0x7F80 as floatToHalf gives) by
/// setting the high byte's missing exponent bits.
template <DType To>
inline void float8E4M3ToHalves(__m256i bytes, __m256i &low, __m256i &high) {
  constexpr bool toBF16 = To == DType::BF16;
  __m256i magnitude = _mm256_and_si256(bytes, splat8(0x7F));
  __m256i sign = _mm256_xor_si256(bytes, magnitude);
  // bfloat16: (m << 4) + (120 << 7); float16: (m << 7) + (8 << 10).
  low = _mm256_and_si256(_mm256_slli_epi16(bytes, toBF16 ? 4 : 7),
                         splat8(toBF16 ? 0xF0 : 0x80));
  high =
      _mm256_add_epi8(_mm256_and_si256(_mm256_srli_epi16(bytes, toBF16 ? 4 : 1),
                                       splat8(toBF16 ? 0x07 : 0x3F)),
                      splat8(toBF16 ? 0x3C : 0x20));
  // The subnormal results' bytes for m = 0..7 (each 128-bit half).
  __m256i subnormalLow =
      toBF16 ? _mm256_setr_epi8(0, 0, char(0x80), char(0xC0), 0, 0x20, 0x40,
                                0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, char(0x80),
                                char(0xC0), 0, 0x20, 0x40, 0x60, 0, 0, 0, 0, 0,
                                0, 0, 0)
             : _mm256_setzero_si256();
  __m256i subnormalHigh =
      toBF16 ? _mm256_setr_epi8(0, 0x3B, 0x3B, 0x3B, 0x3C, 0x3C, 0x3C, 0x3C, 0,
                                0, 0, 0, 0, 0, 0, 0, 0, 0x3B, 0x3B, 0x3B, 0x3C,
                                0x3C, 0x3C, 0x3C, 0, 0, 0, 0, 0, 0, 0, 0)
             : _mm256_setr_epi8(0, 0x18, 0x1C, 0x1E, 0x20, 0x21, 0x22, 0x23, 0,
                                0, 0, 0, 0, 0, 0, 0, 0, 0x18, 0x1C, 0x1E, 0x20,
                                0x21, 0x22, 0x23, 0, 0, 0, 0, 0, 0, 0, 0);
  __m256i isSubnormal = _mm256_cmpgt_epi8(splat8(8), magnitude);
  if constexpr (toBF16)
    low = _mm256_blendv_epi8(low, _mm256_shuffle_epi8(subnormalLow, magnitude),
                             isSubnormal);
  else
    low = _mm256_andnot_si256(isSubnormal, low); // their low bytes are 0
  high = _mm256_blendv_epi8(high, _mm256_shuffle_epi8(subnormalHigh, magnitude),
                            isSubnormal);
  __m256i isNaN = _mm256_cmpeq_epi8(magnitude, splat8(0x7F));
  high = _mm256_or_si256(_mm256_or_si256(high, sign),
                         _mm256_and_si256(isNaN, splat8(toBF16 ? 0x3C : 0x20)));
}

/// Eight 8-bit integers or bools (the low bytes of `bytes`) as float32
/// bits, exact; a bool is 1 where its byte is nonzero.
template <DType From> inline __m256i byteIntegerToFloat(__m128i bytes) {
  if constexpr (From == DType::Bool) {
    __m256i isZero =
        _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(bytes), _mm256_setzero_si256());
    return _mm256_andnot_si256(isZero, splat(0x3F800000)); // 1.0f
  } else if constexpr (From == DType::I8) {
    return _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)));
  } else {
    static_assert(From == DType::U8, "an 8-bit integer or bool");
    return _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)));
  }
}

/// Eight elements of an 8-bit source at `src` but float8_e4m3fn as
/// float32 bits, exact. float8_e5m2 is a float16's top byte, converted by
/// F16C (its NaNs become quiet with their payload on top, as
/// halfToFloat's).
template <DType From> inline __m256i byteToFloat(const std::byte *src) {
  if constexpr (From == DType::F8E5M2)
    return _mm256_castps_si256(
        _mm256_cvtph_ps(_mm_slli_epi16(_mm_cvtepu8_epi16(load64(src)), 8)));
  else
    return byteIntegerToFloat<From>(load64(src));
}

/// The 32 bytes of results of stepOf(From, To) elements at `src` (not
/// from float8_e4m3fn, whose steps are float8E4M3Step).
template <DType From, DType To>
inline __m256i convertStep(const std::byte *src) {
  if constexpr (From == DType::F16 && To == DType::F32) {
    // Exact, subnormals included; a NaN becomes quiet with its payload on
    // top, as halfToFloat's.
    return _mm256_castps_si256(_mm256_cvtph_ps(load128(src)));
  } else if constexpr (From == DType::F16 && To == DType::BF16) {
    // floatToBFloat16(halfToFloat(x)), the element conversion.
    __m256i low = _mm256_castps_si256(_mm256_cvtph_ps(load128(src)));
    __m256i high = _mm256_castps_si256(_mm256_cvtph_ps(load128(src + 16)));
    return packed(roundedToBFloat16(low), roundedToBFloat16(high));
  } else if constexpr (From == DType::BF16 && To == DType::F16) {
    // floatToHalf of the bfloat16's float32 (roundedToHalf).
    return _mm256_set_m128i(roundedToHalf(_mm256_slli_epi32(
                                _mm256_cvtepu16_epi32(load128(src + 16)), 16)),
                            roundedToHalf(_mm256_slli_epi32(
                                _mm256_cvtepu16_epi32(load128(src)), 16)));
  } else if constexpr (To == DType::F32) {
    return byteToFloat<From>(src);
  } else if constexpr (To == DType::BF16) {
    // Every value of an 8-bit source is exact in bfloat16 (at most 3
    // mantissa bits, or 8 bits of integer): the float32's top half, a NaN
    // already quiet.
    return packed(_mm256_srli_epi32(byteToFloat<From>(src), 16),
                  _mm256_srli_epi32(byteToFloat<From>(src + 8), 16));
  } else {
    static_assert(From == DType::F8E5M2 && To == DType::F16, "no AVX2 kernel");
    // A float16's top byte: exact, but a NaN becomes quiet (floatToHalf).
    __m256i half = _mm256_slli_epi16(_mm256_cvtepu8_epi16(load128(src)), 8);
    __m256i isNaN =
        _mm256_cmpgt_epi16(_mm256_and_si256(half, _mm256_set1_epi16(0x7FFF)),
                           _mm256_set1_epi16(0x7C00));
    return _mm256_or_si256(half,
                           _mm256_and_si256(isNaN, _mm256_set1_epi16(0x0200)));
  }
}

template <bool Streaming> inline void put(std::byte *at, __m256i value) {
  if constexpr (Streaming)
    _mm256_stream_si256(reinterpret_cast<__m256i *>(at), value);
  else
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(at), value);
}

inline __m256i splat16(int value) { return _mm256_set1_epi16(int16_t(value)); }

/// Rounds away the low `Shift` bits of 16-bit lanes to nearest even.
template <int Shift> inline __m256i roundedShift16(__m256i rebiased) {
  __m256i lsb =
      _mm256_and_si256(_mm256_srli_epi16(rebiased, Shift), splat16(1));
  return _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(rebiased, lsb),
                                            splat16((1 << (Shift - 1)) - 1)),
                           Shift);
}

/// subnormalByAddition on eight float32 lanes that hold no float32
/// subnormal (which would take the slow microcode path): |value| + `magic`
/// rounds to the target's subnormal step.
inline __m256i roundedByAddition(__m256i magnitude, float magic) {
  __m256 sum =
      _mm256_add_ps(_mm256_castsi256_ps(magnitude), _mm256_set1_ps(magic));
  uint32_t magicBits;
  std::memcpy(&magicBits, &magic, sizeof(magicBits));
  return _mm256_sub_epi32(_mm256_castps_si256(sum), splat(int32_t(magicBits)));
}

/// The magnitudes (as source bit patterns) between which, exclusive, a
/// float16 or bfloat16 has a subnormal result in an 8-bit float: above the
/// largest that rounds to zero, below the smallest normal result (SSE2's
/// narrowSixteenBit's, FastCastSse2.h).
template <DType From, DType To> constexpr int16_t largestZeroOf() {
  if constexpr (From == DType::BF16)
    return To == DType::F8E4M3 ? 0x3A80 : 0x3700;
  else
    return To == DType::F8E4M3 ? 0x1400 : 0;
}
template <DType From, DType To> constexpr int16_t smallestNormalOf() {
  if constexpr (From == DType::BF16)
    return To == DType::F8E4M3 ? 0x3C80 : 0x3880;
  else
    return To == DType::F8E4M3 ? 0x2400 : 0;
}

/// The subnormal results (without the sign) for sixteen 16-bit source
/// magnitudes, through float32 as SSE2's subnormalLanes: a bfloat16 is its
/// float32's top half, raised to the largest magnitude that rounds to zero
/// where below it (the same result, 0, and never a float32 subnormal); a
/// float16 is rebiased as if normal (a float16 subnormal rounds to 0 in
/// e4m3fn; e5m2 needs no subnormal lanes from float16); the unpacks and the
/// pack keep the lanes' order.
template <DType From, DType To>
inline __m256i subnormalLanes16(__m256i magnitude) {
  __m256i zero = _mm256_setzero_si256();
  __m256i low, high;
  if constexpr (From == DType::BF16) {
    magnitude = _mm256_max_epi16(magnitude, splat16(largestZeroOf<From, To>()));
    low = _mm256_unpacklo_epi16(zero, magnitude);
    high = _mm256_unpackhi_epi16(zero, magnitude);
  } else {
    low = _mm256_add_epi32(
        _mm256_slli_epi32(_mm256_unpacklo_epi16(magnitude, zero), 13),
        splat((127 - 15) << 23));
    high = _mm256_add_epi32(
        _mm256_slli_epi32(_mm256_unpackhi_epi16(magnitude, zero), 13),
        splat((127 - 15) << 23));
  }
  constexpr float magic = To == DType::F8E4M3 ? 0x1p14f : 0x1p7f;
  return _mm256_packs_epi32(roundedByAddition(low, magic),
                            roundedByAddition(high, magic));
}

/// Sixteen float16s or bfloat16s at `src` as float8_e4m3fn or float8_e5m2
/// in 16-bit lanes, with or without the subnormal results: SSE2's
/// narrowSixteenBit (whose comments say why each step gives the element
/// conversion's bits), sixteen lanes an instruction.
template <DType From, DType To, bool Subnormals>
inline __m256i narrowedToFloat8(const std::byte *src) {
  constexpr bool fromBF16 = From == DType::BF16;
  constexpr int16_t largestZero = largestZeroOf<From, To>();
  constexpr int16_t smallestNormal = smallestNormalOf<From, To>();
  __m256i value = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src));
  __m256i magnitude = _mm256_and_si256(value, splat16(0x7FFF));
  __m256i sign = _mm256_andnot_si256(magnitude, value);
  __m256i result;
  if constexpr (To == DType::F8E4M3) {
    // From 480 up (Inf and NaN too) the rounding gives 0x7F or more, NaN
    // (as it gives 0x7F past 464); no 16-bit sum overflows.
    constexpr int shift = fromBF16 ? 4 : 7;
    __m256i normal = roundedShift16<shift>(_mm256_sub_epi16(
        magnitude, splat16(fromBF16 ? (127 - 7) << 7 : 8 << 10)));
    result = _mm256_min_epu16(normal, splat16(0x7F));
  } else {
    __m256i isNaN =
        _mm256_cmpgt_epi16(magnitude, splat16(fromBF16 ? 0x7F80 : 0x7C00));
    __m256i rebiased =
        fromBF16 ? _mm256_sub_epi16(magnitude, splat16((127 - 15) << 7))
                 : magnitude;
    constexpr int shift = fromBF16 ? 5 : 8;
    __m256i normal = roundedShift16<shift>(rebiased);
    // Overflow gives Inf (0x7C), NaN 0x7F.
    result = _mm256_or_si256(_mm256_min_epi16(normal, splat16(0x7C)),
                             _mm256_and_si256(isNaN, splat16(0x03)));
  }
  if constexpr (smallestNormal > 0 && Subnormals) {
    // The subnormal rounding also gives 0 to the magnitudes below.
    result = _mm256_blendv_epi8(
        result, subnormalLanes16<From, To>(magnitude),
        _mm256_cmpgt_epi16(splat16(smallestNormal), magnitude));
  } else if constexpr (largestZero > 0) {
    result = _mm256_andnot_si256(
        _mm256_cmpgt_epi16(splat16(largestZero + 1), magnitude), result);
  }
  return _mm256_or_si256(result, _mm256_srli_epi16(sign, 8));
}

/// Narrows the first count - count % 32 float16s or bfloat16s at `src` to
/// float8_e4m3fn or float8_e5m2; returns how many. As SSE2's
/// narrowSixteenBit, one branch per chunk of 64 elements on whether any
/// lane of it has a subnormal result.
template <DType From, DType To, bool Streaming>
size_t narrowSteps(const std::byte *src, std::byte *dst, size_t count) {
  constexpr int16_t largestZero = largestZeroOf<From, To>();
  constexpr int16_t smallestNormal = smallestNormalOf<From, To>();
  constexpr size_t kChunk = 64;
  size_t whole = count - count % 32;
  for (size_t i = 0; i < whole;) {
    size_t end = std::min(i + kChunk, whole);
    bool subnormals = false;
    if constexpr (smallestNormal > 0) {
      __m256i seen = _mm256_setzero_si256();
      for (size_t k = i; k < end; k += 16) {
        __m256i magnitude = _mm256_and_si256(
            _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + 2 * k)),
            splat16(0x7FFF));
        seen = _mm256_or_si256(
            seen, _mm256_and_si256(
                      _mm256_cmpgt_epi16(magnitude, splat16(largestZero)),
                      _mm256_cmpgt_epi16(splat16(smallestNormal), magnitude)));
      }
      subnormals = !_mm256_testz_si256(seen, seen);
    }
    for (; i < end; i += 32) {
      __m256i first, second;
      if (subnormals) {
        first = narrowedToFloat8<From, To, true>(src + 2 * i);
        second = narrowedToFloat8<From, To, true>(src + 2 * i + 32);
      } else {
        first = narrowedToFloat8<From, To, false>(src + 2 * i);
        second = narrowedToFloat8<From, To, false>(src + 2 * i + 32);
      }
      // Results 0..255; the pack works within 128-bit halves.
      put<Streaming>(
          dst + i, _mm256_permute4x64_epi64(_mm256_packus_epi16(first, second),
                                            _MM_SHUFFLE(3, 1, 2, 0)));
    }
  }
  return whole;
}

/// Thirty-two float8_e4m3fn at `src` as bfloat16, float16 or float32 at
/// `dst` (float8E4M3ToHalves; a float32 is its bfloat16 moved up 16
/// bits). The source is permuted first so that the unpacks within 128-bit
/// halves leave the results in order.
template <DType To, bool Streaming>
inline void float8E4M3Step(const std::byte *src, std::byte *dst) {
  __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src));
  __m256i low, high;
  if constexpr (To == DType::F32) {
    // Four-byte groups g0..g7 as g0 g2 g4 g6 | g1 g3 g5 g7: the byte
    // unpacks give elements 0-3 8-11 | 4-7 12-15 (and 16-19 24-27 | 20-23
    // 28-31), the 16-bit ones then 0-7, 8-15, 16-23, 24-31.
    bytes = _mm256_permutevar8x32_epi32(
        bytes, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    float8E4M3ToHalves<DType::BF16>(bytes, low, high);
    __m256i first = _mm256_unpacklo_epi8(low, high);
    __m256i second = _mm256_unpackhi_epi8(low, high);
    __m256i zero = _mm256_setzero_si256();
    put<Streaming>(dst, _mm256_unpacklo_epi16(zero, first));
    put<Streaming>(dst + 32, _mm256_unpackhi_epi16(zero, first));
    put<Streaming>(dst + 64, _mm256_unpacklo_epi16(zero, second));
    put<Streaming>(dst + 96, _mm256_unpackhi_epi16(zero, second));
  } else {
    // Eight-byte groups q0..q3 as q0 q2 | q1 q3: the byte unpacks give
    // elements 0-7 | 8-15 and 16-23 | 24-31.
    bytes = _mm256_permute4x64_epi64(bytes, _MM_SHUFFLE(3, 1, 2, 0));
    float8E4M3ToHalves<To>(bytes, low, high);
    put<Streaming>(dst, _mm256_unpacklo_epi8(low, high));
    put<Streaming>(dst + 32, _mm256_unpackhi_epi8(low, high));
  }
}

template <DType From, DType To, bool Streaming>
size_t castSteps(const std::byte *src, std::byte *dst, size_t count) {
  constexpr size_t step = stepOf(From, To);
  constexpr size_t srcSize = sizeof(typename ElementStorage<From>::type);
  constexpr size_t dstSize = sizeof(typename ElementStorage<To>::type);
  size_t whole = count - count % step;
  for (size_t i = 0; i < whole; i += step) {
    const std::byte *from = src + i * srcSize;
    std::byte *to = dst + i * dstSize;
    if constexpr (From == DType::F8E4M3) {
      float8E4M3Step<To, Streaming>(from, to);
    } else {
      put<Streaming>(to, convertStep<From, To>(from));
    }
  }
  return whole;
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

} // namespace
#endif

template <DType From, DType To>
size_t castWhole(const std::byte *src, std::byte *dst, size_t count,
                 bool streaming) {
  static_assert(hasKernel(From, To), "no AVX2 kernel for this cast");
#if defined(AOA_FASTCAST_AVX2)
  if constexpr (To == DType::F8E4M3 || To == DType::F8E5M2)
    return streaming ? narrowSteps<From, To, true>(src, dst, count)
                     : narrowSteps<From, To, false>(src, dst, count);
  else
    return streaming ? castSteps<From, To, true>(src, dst, count)
                     : castSteps<From, To, false>(src, dst, count);
#else
  (void)src, (void)dst, (void)count, (void)streaming;
  return 0;
#endif
}

template size_t castWhole<DType::F16, DType::F32>(const std::byte *,
                                                  std::byte *, size_t, bool);
template size_t castWhole<DType::F16, DType::BF16>(const std::byte *,
                                                   std::byte *, size_t, bool);
template size_t castWhole<DType::BF16, DType::F16>(const std::byte *,
                                                   std::byte *, size_t, bool);
#define AOA_CAST_WHOLE(FROM)                                                   \
  template size_t castWhole<DType::FROM, DType::F32>(                          \
      const std::byte *, std::byte *, size_t, bool);                           \
  template size_t castWhole<DType::FROM, DType::BF16>(                         \
      const std::byte *, std::byte *, size_t, bool);
AOA_CAST_WHOLE(F8E4M3)
AOA_CAST_WHOLE(F8E5M2)
AOA_CAST_WHOLE(I8)
AOA_CAST_WHOLE(U8)
AOA_CAST_WHOLE(Bool)
#undef AOA_CAST_WHOLE
#define AOA_CAST_WHOLE(FROM)                                                   \
  template size_t castWhole<DType::FROM, DType::F8E4M3>(                       \
      const std::byte *, std::byte *, size_t, bool);                           \
  template size_t castWhole<DType::FROM, DType::F8E5M2>(                       \
      const std::byte *, std::byte *, size_t, bool);
AOA_CAST_WHOLE(F16)
AOA_CAST_WHOLE(BF16)
#undef AOA_CAST_WHOLE
template size_t castWhole<DType::F8E4M3, DType::F16>(const std::byte *,
                                                     std::byte *, size_t, bool);
template size_t castWhole<DType::F8E5M2, DType::F16>(const std::byte *,
                                                     std::byte *, size_t, bool);

} // namespace aoa::runtime::fastcast::avx2
