//===- FastCast.h - Vectorized casts between the float dtypes ---*- C++ -*-===//
//
// Private to the runtime library. Contiguous runs of casts between two
// float dtypes, fast on baseline x86-64 (SSE2, no -march), with exactly the
// bits of the scalar conversions (FloatConversion.h, Float8Conversion.h),
// which stay the reference (test/unit/runtime_transforms/FastCastTest.cpp
// compares every 8- and 16-bit input and millions of float32 ones):
//
//  - an 8-bit (FP8) source is looked up in a 256-entry table of results
//    computed by the reference itself;
//  - the other conversions are rewritten on signed 32-bit integers with
//    mask selects, which GCC vectorizes (SSE2 has neither unsigned compares
//    nor unsigned int -> float conversions, and a select between float
//    results is otherwise a branch, as -ftrapping-math keeps float
//    arithmetic from being speculated); the narrowing to float16, e4m3fn
//    and e5m2 is written in SSE2 intrinsics, since the vectorizer narrows
//    to 16 bits early and spends twice the instructions on shuffles;
//  - every cast between floats but from float64 is "widen to float32, then
//    narrow" (CastElement's fromFloat(toFloat(x))), so a pair without
//    float32 runs as two loops over a block held in a small stack buffer;
//    float64 reaches float32 and the FP8 formats through float32 as well.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_FASTCAST_H
#define AOA_RUNTIME_TRANSFORMS_LIB_FASTCAST_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace aoa::runtime::fastcast {

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

#if defined(__SSE2__)
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
} // namespace sse2
#endif

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

/// Whether castRun converts `from` to `to`: every cast between two
/// different floats, except from float64 to float16 and bfloat16 (which
/// round to odd first).
constexpr bool hasFastCast(DType from, DType to) {
  return isFloatElement(from) && isFloatElement(to) && from != to &&
         (from != DType::F64 || to == DType::F32 || isFloat8Element(to));
}

/// Loads and stores that need no alignment (plain moves once vectorized).
template <typename T> inline T load(const std::byte *at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}
template <typename T> inline void store(std::byte *at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

#if defined(__SSE2__)
namespace sse2 {
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
} // namespace sse2
#endif

/// `count` elements of dtype `From` at `src` as float32 at `dst`.
template <DType From>
void widenToFloat(const std::byte *src, std::byte *dst, size_t count) {
  using Src = typename ElementStorage<From>::type;
  size_t start = 0;
#if defined(__SSE2__)
  if constexpr (From == DType::F16 || From == DType::BF16)
    start = sse2::widenToFloat<From>(src, dst, count);
#endif
  for (size_t i = start; i < count; ++i) {
    Src value = load<Src>(src + i * sizeof(Src));
    float wide;
    if constexpr (From == DType::F16)
      wide = halfToFloat(value);
    else if constexpr (From == DType::BF16)
      wide = bfloat16ToFloat(value);
    else if constexpr (From == DType::F64)
      wide = static_cast<float>(value); // doubleToFloat on the host
    else
      wide = value;
    store<float>(dst + i * sizeof(float), wide);
  }
}

#if defined(__SSE2__)
/// SSE2 versions of floatToBFloat16, floatToHalf (without the sign, which
/// the caller adds after packing), floatToFloat8E4M3 and floatToFloat8E5M2
/// on four floats' bits, giving the results in 32-bit lanes: the same
/// operations as the scalar ones above. The vectorizer narrows to 16 bits
/// early and spends twice the instructions on shuffles.
namespace sse2 {
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
} // namespace sse2
#endif

/// `count` float32 elements at `src` as dtype `To` at `dst`.
template <DType To>
void narrowFromFloat(const std::byte *src, std::byte *dst, size_t count) {
  using Dst = typename ElementStorage<To>::type;
  size_t start = 0;
#if defined(__SSE2__)
  if constexpr (To == DType::F16 || To == DType::BF16 || To == DType::F8E4M3 ||
                To == DType::F8E5M2)
    start = sse2::narrowFromFloat<To>(src, dst, count);
#endif
  for (size_t i = start; i < count; ++i) {
    float value = load<float>(src + i * sizeof(float));
    Dst narrow;
    if constexpr (To == DType::F16)
      narrow = floatToHalf(value);
    else if constexpr (To == DType::BF16)
      narrow = floatToBFloat16(value);
    else if constexpr (To == DType::F8E4M3)
      narrow = floatToFloat8E4M3(value);
    else if constexpr (To == DType::F8E5M2)
      narrow = floatToFloat8E5M2(value);
    else if constexpr (To == DType::F8E8M0)
      narrow = floatToFloat8E8M0(value);
    else if constexpr (To == DType::F64)
      narrow = static_cast<double>(value); // floatToDouble on the host
    else
      narrow = value;
    store<Dst>(dst + i * sizeof(Dst), narrow);
  }
}

/// The 256 results of a cast from an 8-bit dtype, from the scalar
/// reference; built once, on first use (a function-local static, so
/// thread-safe), and never changed.
template <DType From, DType To>
const typename ElementStorage<To>::type *byteTable() {
  using Dst = typename ElementStorage<To>::type;
  static const std::array<Dst, 256> table = [] {
    std::array<Dst, 256> results{};
    for (size_t i = 0; i < results.size(); ++i)
      results[i] = CastElement<From, To>::convert(static_cast<uint8_t>(i));
    return results;
  }();
  return table.data();
}

/// Converts an 8-bit source by table lookup, eight elements a step (one
/// 8-byte load for them).
template <DType From, DType To>
void lookUpRun(const std::byte *src, std::byte *dst, size_t count) {
  using Dst = typename ElementStorage<To>::type;
  const Dst *table = byteTable<From, To>();
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    uint64_t bytes = load<uint64_t>(src + i);
    Dst results[8];
    for (int k = 0; k < 8; ++k)
      results[k] = table[(bytes >> (8 * k)) & 0xFF];
    std::memcpy(dst + i * sizeof(Dst), results, sizeof(results));
  }
  for (; i < count; ++i)
    store<Dst>(dst + i * sizeof(Dst), table[load<uint8_t>(src + i)]);
}

/// Asks for the source lines of the next blocks ahead of their use, 4 KiB
/// ahead of the block being cast: on the machine measured (a VM) the
/// hardware prefetcher alone left these loops at half a memcpy's bandwidth.
constexpr size_t kPrefetchDistance = 4096;
inline void prefetchSource(const std::byte *at, size_t bytes) {
#if defined(__GNUC__)
  for (size_t offset = 0; offset < bytes; offset += 64)
    __builtin_prefetch(at + offset);
#else
  (void)at, (void)bytes;
#endif
}

/// Destinations from this size on are written with non-temporal (streaming)
/// stores: a normal store first reads the line it writes (for ownership),
/// which for a cast larger than the caches costs as much memory bandwidth
/// as the writes themselves, and twice the source's for a widening cast. A
/// smaller destination likely stays in cache for its reader.
constexpr size_t kStreamingBytes = size_t(8) << 20;

/// Copies `bytes` from the buffer `from` to `to` (16-byte aligned) with
/// streaming stores where SSE2 has them.
inline void streamOut(const std::byte *from, std::byte *to, size_t bytes) {
  size_t done = 0;
#if defined(__SSE2__)
  for (; done + 16 <= bytes; done += 16)
    _mm_stream_si128(
        reinterpret_cast<__m128i *>(to + done),
        _mm_load_si128(reinterpret_cast<const __m128i *>(from + done)));
#endif
  std::memcpy(to + done, from + done, bytes - done);
}

#if defined(__SSE2__)
namespace sse2 {
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
#endif

/// Casts `length` (at most kBlock) elements; `buffer` holds kBlock floats.
template <DType From, DType To>
void castBlock(const std::byte *from, std::byte *to, size_t length,
               std::byte *buffer) {
  if constexpr (sizeof(typename ElementStorage<From>::type) == 1) {
    lookUpRun<From, To>(from, to, length);
  } else if constexpr (From == DType::F32) {
    narrowFromFloat<To>(from, to, length);
  } else if constexpr (To == DType::F32) {
    widenToFloat<From>(from, to, length);
  } else {
    size_t done = 0;
#if defined(__SSE2__)
    if constexpr (sse2::hasSixteenBitLanes(From, To))
      done = sse2::narrowSixteenBit<From, To>(from, to, length);
#endif
    using Src = typename ElementStorage<From>::type;
    using Dst = typename ElementStorage<To>::type;
    widenToFloat<From>(from + done * sizeof(Src), buffer, length - done);
    narrowFromFloat<To>(buffer, to + done * sizeof(Dst), length - done);
  }
}

/// Casts `count` elements from `From` at `src` to `To` at `dst`
/// (hasFastCast(From, To)) in blocks of kBlock elements, prefetching the
/// source kPrefetchDistance ahead: an 8-bit source by table, float32 (or
/// float64) on either side directly, any other pair widened into a stack
/// buffer and narrowed from there. A large destination is written through a
/// second buffer with streaming stores (kStreamingBytes). A block is read
/// whole before it is written, so a cast between equal sizes may work in
/// place.
template <DType From, DType To>
void castRun(const std::byte *src, std::byte *dst, size_t count) {
  static_assert(hasFastCast(From, To), "no vector path for this cast");
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  constexpr size_t kBlock = 512;
  constexpr size_t kBlockBytes = kBlock * sizeof(Src);
  alignas(16) std::byte buffer[kBlock * sizeof(float)];
  alignas(16) std::byte output[kBlock * sizeof(Dst)];
  size_t start = 0;
  bool streaming = false;
#if defined(__SSE2__)
  uintptr_t address = reinterpret_cast<uintptr_t>(dst);
  if (count * sizeof(Dst) >= kStreamingBytes && address % sizeof(Dst) == 0) {
    // Elements up to the first 16-byte boundary go the normal way.
    start = ((16 - address % 16) % 16) / sizeof(Dst);
    castBlock<From, To>(src, dst, start, buffer);
    streaming = true;
  }
#endif
  for (; start < count; start += kBlock) {
    size_t length = std::min(kBlock, count - start);
    const std::byte *from = src + start * sizeof(Src);
    std::byte *to = dst + start * sizeof(Dst);
    if ((count - start) * sizeof(Src) > kPrefetchDistance + kBlockBytes)
      prefetchSource(from + kPrefetchDistance, kBlockBytes);
    if (streaming) {
      castBlock<From, To>(from, output, length, buffer);
      streamOut(output, to, length * sizeof(Dst));
    } else {
      castBlock<From, To>(from, to, length, buffer);
    }
  }
#if defined(__SSE2__)
  if (streaming)
    _mm_sfence(); // streaming stores are weakly ordered
#endif
}

} // namespace aoa::runtime::fastcast

#endif // AOA_RUNTIME_TRANSFORMS_LIB_FASTCAST_H
