//===- FastCastIntegers.h - Vector casts from and to integers ---*- C++ -*-===//
//
// Private to the runtime library (FastCast.h). Casts with an integer dtype
// or bool on either side, as loops over typed lanes that GCC vectorizes for
// baseline x86-64 (64- to 32-bit integers, and float32 to 64-bit integers
// in 32-bit lanes where they fit, in SSE2: GCC vectorizes neither), with
// exactly the results and failures of the element conversion (CastElement,
// StridedCopyElement.h), which stays the reference
// (test/unit/runtime_transforms/FastCastIntegersTest.cpp compares every 8-
// and 16-bit input and many 32- and 64-bit ones, range edges included):
//
//  - a checked cast (a float, or a wider integer range, to an integer)
//    tests each lane against the target's range as it converts, into a
//    vectorized reduction, and only a block with a lane out of range is
//    searched (again, in its source) for the first one; a cast in place
//    searches before it writes. The conversion writes 0 for such a lane,
//    as the element path does;
//  - a float lane becomes an integer by truncation of the value, replaced
//    by 0 first where it is out of range (or NaN), so no lane converts a
//    float that the integer does not hold;
//  - an integer becomes float32 or float64 by the hardware's conversion,
//    rounded once to nearest even, which is what CastElement's sticky
//    double then rounded gives; float16 and the FP8 formats are reached
//    from float32 (FastCast.h), which holds every integer below 2^24
//    exactly, while float16 overflows from 65520 and the FP8 formats are
//    defined through float32; bfloat16 only from integers of at most 16
//    bits (a wider one through float32 would round twice).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTINTEGERS_H
#define AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTINTEGERS_H

#include "FastCastElements.h"
#include "aoa/ir/DType.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace aoa::runtime::fastcast {

constexpr bool isIntegerOrBool(DType d) {
  return isIntegerElement(d) || d == DType::Bool;
}

/// Whether every value of an integer dtype (or bool) is exact in float32.
constexpr bool isExactInFloat32(DType d) {
  return d == DType::I16 || d == DType::I8 || d == DType::U16 ||
         d == DType::U8 || d == DType::Bool;
}

/// Whether the integer casts here convert `from` to `to`: two castable
/// dtypes, at least one of them an integer or bool, except integers wider
/// than 16 bits to bfloat16.
constexpr bool hasIntegerCast(DType from, DType to) {
  bool fromInteger = isIntegerOrBool(from), toInteger = isIntegerOrBool(to);
  return from != to && (fromInteger || toInteger) &&
         (fromInteger || isFloatElement(from)) &&
         (toInteger || isFloatElement(to)) &&
         !(fromInteger && to == DType::BF16 && !isExactInFloat32(from));
}

/// What a lane of `From` holds: its storage, except bool, which is 0 or 1
/// (any nonzero byte reads as true).
template <DType From> struct Lane {
  using Storage = typename ElementStorage<From>::type;
  using type = Storage;
  /// An unsigned integer of the lane's width.
  using Flag = std::conditional_t<
      sizeof(Storage) == 1, uint8_t,
      std::conditional_t<
          sizeof(Storage) == 2, uint16_t,
          std::conditional_t<sizeof(Storage) == 4, uint32_t, uint64_t>>>;
  static type load(const std::byte *at) {
    Storage value = fastcast::load<Storage>(at);
    if constexpr (From == DType::Bool)
      return type(value != 0 ? 1 : 0);
    else
      return value;
  }
};

/// One lane of `From` (an integer, bool, float32 or float64) cast to `To`
/// (an integer or bool; or float32 or float64 from an integer or bool).
template <DType From, DType To> struct LaneCast {
  using S = typename Lane<From>::type;
  using Dst = typename ElementStorage<To>::type;
  static constexpr bool kFromFloat = std::is_floating_point_v<S>;
  static constexpr bool kBelowMin = !kFromFloat &&
                                    integerMin(To) > integerMin(From);
  static constexpr bool kAboveMax =
      !kFromFloat && integerMax(To) < integerMax(From);
  /// Whether a lane can be out of `To`'s range (isCheckedCast).
  static constexpr bool kChecked =
      isIntegerElement(To) && (kFromFloat || kBelowMin || kAboveMax);
  static_assert(kChecked == isCheckedCast(From, To),
                "the lanes and the element path check different casts");

  /// Whether `value` has a result in `To` (always, for an unchecked cast).
  /// A float is compared as CastElement compares its double (min - 1 <
  /// value < max + 1), with bounds that are exact in the lane's type. Both
  /// comparisons are made (`&`, not `&&`): GCC vectorizes no branch on a
  /// float comparison, which may trap.
  static bool inRange(S value) {
    if constexpr (!kChecked) {
      (void)value;
      return true;
    } else if constexpr (kFromFloat) {
      if constexpr (To == DType::I64)
        return (value >= S(-0x1p63)) & (value < S(0x1p63));
      else if constexpr (To == DType::U64)
        return (value > S(-1)) & (value < S(0x1p64));
      else if constexpr (To == DType::I32 && std::is_same_v<S, float>)
        return (value >= -0x1p31f) & (value < 0x1p31f); // -2^31 - 1: no float
      else
        return (value > S(double(integerMin(To)) - 1.0)) &
               (value < S(double(integerMax(To)) + 1.0));
    } else {
      bool aboveMin = true, belowMax = true;
      if constexpr (kBelowMin)
        aboveMin = value >= S(integerMin(To));
      if constexpr (kAboveMax)
        belowMax = value <= S(integerMax(To));
      return aboveMin & belowMax;
    }
  }

  /// `value` in `To`; 0 where it is out of range.
  static Dst convert(S value) {
    if constexpr (To == DType::Bool) {
      return Dst(value != 0 ? 1 : 0); // NaN too
    } else if constexpr (To == DType::F64) {
      return static_cast<double>(value);
    } else if constexpr (To == DType::F32) {
      if constexpr (std::is_same_v<S, uint32_t>)
        // SSE2 converts signed lanes only: the two 16-bit halves are
        // exact, and their sum is rounded once.
        return float(int32_t(value >> 16)) * 65536.0f +
               float(int32_t(value & 0xFFFF));
      else if constexpr (sizeof(S) <= 4)
        return float(int32_t(value));
      else
        return static_cast<float>(value);
    } else if constexpr (!kFromFloat) {
      return inRange(value) ? Dst(value) : Dst(0);
    } else {
      S kept = inRange(value) ? value : S(0);
      if constexpr (To == DType::I64)
        return static_cast<int64_t>(kept);
      else if constexpr (To == DType::U64)
        return kept <= 0 ? Dst(0) : static_cast<uint64_t>(kept);
      else if constexpr (To == DType::U32) {
        // SSE2 truncates to signed lanes only: values from 2^31 up are
        // moved down by 2^31 (exactly) first.
        bool high = kept >= S(0x1p31);
        S shifted = kept - S(0x1p31);
        return uint32_t(int32_t(high ? shifted : kept)) +
               (high ? 0x80000000u : 0u);
      } else
        return Dst(int32_t(kept));
    }
  }
};

#if defined(__SSE2__)
/// A checked cast from a 64- to a 32-bit integer (int64 or uint64 to int32
/// or uint32) of the first count - count % 4 lanes, in SSE2, which GCC
/// does not vectorize (SSE2 has no 64-bit compare): a lane fits where its
/// high half is the sign extension of its low half (to int32) or zero (to
/// uint32; from uint64 to int32, the low half's sign bit must be clear
/// too), and is then its low half, else 0 (LaneCast). Sets `outside` where
/// a lane does not fit; returns how many lanes were done.
template <DType From, DType To, typename Flag>
size_t narrowWords64To32(const std::byte *src, std::byte *dst, size_t count,
                         Flag &outside) {
  size_t whole = count - count % 4;
  __m128i allFit = _mm_set1_epi32(-1);
  for (size_t i = 0; i < whole; i += 4) {
    __m128 first = _mm_castsi128_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 8 * i)));
    __m128 second = _mm_castsi128_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 8 * i + 16)));
    __m128i low = _mm_castps_si128(
        _mm_shuffle_ps(first, second, _MM_SHUFFLE(2, 0, 2, 0)));
    __m128i high = _mm_castps_si128(
        _mm_shuffle_ps(first, second, _MM_SHUFFLE(3, 1, 3, 1)));
    __m128i expectedHigh;
    if constexpr (From == DType::I64 && To == DType::I32)
      expectedHigh = _mm_srai_epi32(low, 31);
    else
      expectedHigh = _mm_setzero_si128();
    if constexpr (From == DType::U64 && To == DType::I32)
      high = _mm_or_si128(high, _mm_srai_epi32(low, 31));
    __m128i fits = _mm_cmpeq_epi32(high, expectedHigh);
    allFit = _mm_and_si128(allFit, fits);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 4 * i),
                     _mm_and_si128(low, fits));
  }
  if (_mm_movemask_epi8(allFit) != 0xFFFF)
    outside = 1;
  return whole;
}
#endif

#if defined(__SSE2__)
/// Four float32 lanes (exact values of the source) cast to int64 or uint64
/// at `dst`, in SSE2, which converts no float to a 64-bit integer in lanes
/// (GCC leaves the loop scalar): when the 4 lanes all lie in [-2^31, 2^31)
/// (to int64) or (-1, 2^31) (to uint64), they are truncated to 32 bits
/// (cvttps2dq) and sign-extended, which is the lanes' own truncation; else
/// (NaN, an infinity, a value beyond int32, in range of the target or not)
/// lane by lane through LaneCast, which sets `outside` for a lane without a
/// result. With `Streaming`, `dst` is 16-byte aligned and written with
/// streaming stores (FastCast.h's castRun).
template <DType To, bool Streaming, typename Flag>
inline void truncateToWords64(__m128 value, std::byte *dst, Flag &outside) {
  static_assert(To == DType::I64 || To == DType::U64, "a 64-bit integer");
  using Cast = LaneCast<DType::F32, To>;
  // Comparisons with NaN are false: such a lane does not fit.
  __m128 aboveLowest = To == DType::I64
                           ? _mm_cmpge_ps(value, _mm_set1_ps(-0x1p31f))
                           : _mm_cmpgt_ps(value, _mm_set1_ps(-1.0f));
  __m128 fits =
      _mm_and_ps(aboveLowest, _mm_cmplt_ps(value, _mm_set1_ps(0x1p31f)));
  __m128i first, second;
  if (_mm_movemask_ps(fits) == 0xF) {
    __m128i words = _mm_cvttps_epi32(value);
    __m128i sign = _mm_srai_epi32(words, 31); // 0 for uint64's lanes
    first = _mm_unpacklo_epi32(words, sign);
    second = _mm_unpackhi_epi32(words, sign);
  } else {
    alignas(16) float lanes[4];
    alignas(16) typename Cast::Dst results[4];
    _mm_store_ps(lanes, value);
    for (int lane = 0; lane < 4; ++lane) {
      outside |= Cast::inRange(lanes[lane]) ? Flag(0) : Flag(1);
      results[lane] = Cast::convert(lanes[lane]);
    }
    first = _mm_load_si128(reinterpret_cast<const __m128i *>(results));
    second = _mm_load_si128(reinterpret_cast<const __m128i *>(results + 2));
  }
  if constexpr (Streaming) {
    _mm_stream_si128(reinterpret_cast<__m128i *>(dst), first);
    _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 16), second);
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst), first);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 16), second);
  }
}

/// A checked cast from float32 to int64 or uint64 of the first count -
/// count % 4 lanes (truncateToWords64); returns how many were done.
template <DType To, typename Flag>
size_t truncateFloatsTo64(const std::byte *src, std::byte *dst, size_t count,
                          Flag &outside) {
  size_t whole = count - count % 4;
  for (size_t i = 0; i < whole; i += 4)
    truncateToWords64<To, false>(
        _mm_loadu_ps(reinterpret_cast<const float *>(src + 4 * i)), dst + 8 * i,
        outside);
  return whole;
}
#endif

/// The index of the first of `count` lanes of `From` at `src` without a
/// result in `To`, or kNoCastFailure.
template <DType From, DType To>
uint64_t firstLaneOutOfRange(const std::byte *src, size_t count) {
  using Src = typename ElementStorage<From>::type;
  for (size_t i = 0; i < count; ++i)
    if (!LaneCast<From, To>::inRange(Lane<From>::load(src + i * sizeof(Src))))
      return i;
  return kNoCastFailure;
}

/// Casts `count` lanes of `From` at `src` to `To` at `dst` (LaneCast);
/// returns the index of the first lane without a result, or kNoCastFailure.
/// A checked cast tests the range as it converts, and searches the source
/// for the first failure only where a lane failed; in place (`src` ==
/// `dst`, equal sizes) it tests the whole source first, before it is
/// overwritten.
template <DType From, DType To>
uint64_t castLanes(const std::byte *src, std::byte *dst, size_t count) {
  using Cast = LaneCast<From, To>;
  using Src = typename ElementStorage<From>::type;
  using Dst = typename Cast::Dst;
  if constexpr (!Cast::kChecked) {
    for (size_t i = 0; i < count; ++i)
      store<Dst>(dst + i * sizeof(Dst),
                 Cast::convert(Lane<From>::load(src + i * sizeof(Src))));
    return kNoCastFailure;
  } else {
    uint64_t failure = kNoCastFailure;
    if (src == dst)
      failure = firstLaneOutOfRange<From, To>(src, count);
    // An accumulator as wide as the destination's lanes, which GCC
    // vectorizes (it does not with the source's width, nor with an int).
    using Flag = typename Lane<To>::Flag;
    Flag outside = 0;
    size_t i = 0;
#if defined(__SSE2__)
    if constexpr (sizeof(Src) == 8 && sizeof(Dst) == 4 &&
                  !std::is_floating_point_v<Src>)
      i = narrowWords64To32<From, To>(src, dst, count, outside);
    else if constexpr (From == DType::F32 && sizeof(Dst) == 8)
      i = truncateFloatsTo64<To>(src, dst, count, outside);
#endif
    for (; i < count; ++i) {
      typename Lane<From>::type value = Lane<From>::load(src + i * sizeof(Src));
      outside |= Cast::inRange(value) ? Flag(0) : Flag(1);
      store<Dst>(dst + i * sizeof(Dst), Cast::convert(value));
    }
    if (outside && src != dst)
      failure = firstLaneOutOfRange<From, To>(src, count);
    return failure;
  }
}

} // namespace aoa::runtime::fastcast

#endif // AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTINTEGERS_H
