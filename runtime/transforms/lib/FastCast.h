//===- FastCast.h - Vectorized casts between the dtypes ---------*- C++ -*-===//
//
// Private to the runtime library. Contiguous runs of casts between two
// float dtypes, fast on baseline x86-64 (SSE2, no -march), with exactly the
// bits of the scalar conversions (FloatConversion.h, Float8Conversion.h),
// which stay the reference (test/unit/runtime_transforms/FastCastTest.cpp
// compares every 8- and 16-bit input and millions of float32 ones); and,
// through the same blocks, the casts with an integer or bool side
// (FastCastIntegers.h):
//
//  - an 8-bit (FP8) source is looked up in a 256-entry table of results
//    computed by the reference itself;
//  - the other conversions are rewritten on signed 32-bit integers with
//    mask selects, which GCC vectorizes (FastCastElements.h), or written in
//    SSE2 intrinsics where the vectorizer does badly (FastCastSse2.h);
//  - every cast between floats but from float64 is "widen to float32, then
//    narrow" (CastElement's fromFloat(toFloat(x))), so a pair without
//    float32 runs as two loops over a block held in a small stack buffer;
//    float64 reaches float32 and the FP8 formats through float32 as well;
//  - where the CPU has AVX2 and F16C (checked once, at run time), the casts
//    from float16, FP8 and 8-bit integers to the 16- and 32-bit floats,
//    and from float16 and bfloat16 to FP8 and each other, run the kernels
//    of FastCastAvx2.h instead, with the same results.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_FASTCAST_H
#define AOA_RUNTIME_TRANSFORMS_LIB_FASTCAST_H

#include "FastCastAvx2.h"
#include "FastCastElements.h"
#include "FastCastIntegers.h"
#include "FastCastSse2.h"
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

/// Whether castRun converts `from` to `to`: every cast between two
/// different floats, except from float64 to float16 and bfloat16 (which
/// round to odd first), and the casts with an integer or bool side that
/// hasIntegerCast names.
constexpr bool hasFastCast(DType from, DType to) {
  return (isFloatElement(from) && isFloatElement(to) && from != to &&
          (from != DType::F64 || to == DType::F32 || isFloat8Element(to))) ||
         hasIntegerCast(from, to);
}

/// Which kernels castRunWith uses: the baseline ones (SSE2), or those of
/// FastCastAvx2.h where they have the cast (only where
/// avx2::isAvailable()).
enum class CastKernels { Sse2, Avx2F16c };

/// The kernels of this CPU.
inline CastKernels availableKernels() {
  return avx2::isAvailable() ? CastKernels::Avx2F16c : CastKernels::Sse2;
}

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
/// 8-byte load for them). With `Streaming` (results of 2 or 4 bytes), `dst`
/// is 16-byte aligned and written with streaming stores (castRun).
template <DType From, DType To, bool Streaming = false>
void lookUpRun(const std::byte *src, std::byte *dst, size_t count) {
  using Dst = typename ElementStorage<To>::type;
  const Dst *table = byteTable<From, To>();
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    uint64_t bytes = load<uint64_t>(src + i);
    alignas(16) Dst results[8];
    for (int k = 0; k < 8; ++k)
      results[k] = table[(bytes >> (8 * k)) & 0xFF];
#if defined(__SSE2__)
    if constexpr (Streaming) {
      static_assert(sizeof(results) % 16 == 0, "whole 16-byte stores only");
      for (size_t at = 0; at < sizeof(results); at += 16)
        _mm_stream_si128(
            reinterpret_cast<__m128i *>(dst + i * sizeof(Dst) + at),
            _mm_load_si128(reinterpret_cast<const __m128i *>(
                reinterpret_cast<const std::byte *>(results) + at)));
      continue;
    }
#endif
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
/// A checked cast of `count` (at most 512) float16s or bfloat16s to int64
/// or uint64 in one pass: each 8 widened in registers (as widenToFloat
/// does) and truncated (truncateToWords64), the last count % 8 through
/// float32 lanes; with `Streaming`, `dst` is 16-byte aligned and its whole
/// vectors are written with streaming stores. Returns the index of the
/// first element without a result, or kNoCastFailure.
template <DType From, DType To, bool Streaming>
uint64_t castHalvesToWords64(const std::byte *src, std::byte *dst,
                             size_t count) {
  using Flag = typename Lane<To>::Flag;
  Flag outside = 0;
  size_t whole = count - count % 8;
  for (size_t i = 0; i < whole; i += 8) {
    __m128i halves = sse2::loadLanes(src + 2 * i), low, high;
    if constexpr (From == DType::BF16) {
      low = _mm_unpacklo_epi16(_mm_setzero_si128(), halves);
      high = _mm_unpackhi_epi16(_mm_setzero_si128(), halves);
    } else {
      sse2::halvesToFloat(halves, low, high);
    }
    truncateToWords64<To, Streaming>(_mm_castsi128_ps(low), dst + 8 * i,
                                     outside);
    truncateToWords64<To, Streaming>(_mm_castsi128_ps(high), dst + 8 * i + 32,
                                     outside);
  }
  uint64_t failure = kNoCastFailure;
  if (count > whole) {
    alignas(16) std::byte tail[8 * sizeof(float)] = {};
    widenToFloat<From>(src + 2 * whole, tail, count - whole);
    failure = castLanes<DType::F32, To>(tail, dst + 8 * whole, count - whole);
    if (failure != kNoCastFailure)
      failure += whole;
  }
  if (outside) {
    // The first failure is in the whole vectors: found in their floats.
    alignas(16) std::byte floats[512 * sizeof(float)];
    widenToFloat<From>(src, floats, whole);
    failure = firstLaneOutOfRange<DType::F32, To>(floats, whole);
  }
  return failure;
}
#endif

/// Casts `length` (at most kBlock) elements with an integer or bool on a
/// side (FastCastIntegers.h): through float32 lanes in `buffer` where the
/// other side is float16, bfloat16 or FP8. Returns the index of the first
/// element without a result, or kNoCastFailure.
template <DType From, DType To>
uint64_t castIntegerBlock(const std::byte *from, std::byte *to, size_t length,
                          std::byte *buffer) {
  constexpr bool toNarrowFloat =
      isFloatElement(To) && To != DType::F32 && To != DType::F64;
  constexpr bool fromNarrowFloat =
      isFloatElement(From) && From != DType::F32 && From != DType::F64;
  if constexpr (To == DType::BF16) {
    // Integers of at most 16 bits: exact as float32, rounded once here;
    // those of 8 bits are exact as bfloat16, a float32's top half.
    using Src = typename ElementStorage<From>::type;
    for (size_t i = 0; i < length; ++i) {
      float value = LaneCast<From, DType::F32>::convert(
          Lane<From>::load(from + i * sizeof(Src)));
      uint16_t result;
      if constexpr (sizeof(Src) == 1)
        result = uint16_t(uint32_t(bitsOf(value)) >> 16);
      else
        result = floatToBFloat16(value);
      store<uint16_t>(to + 2 * i, result);
    }
    return kNoCastFailure;
  } else if constexpr (toNarrowFloat) {
    castLanes<From, DType::F32>(from, buffer, length);
    narrowFromFloat<To>(buffer, to, length);
    return kNoCastFailure;
  } else if constexpr (fromNarrowFloat) {
#if defined(__SSE2__)
    if constexpr ((From == DType::F16 || From == DType::BF16) &&
                  (To == DType::I64 || To == DType::U64))
      return castHalvesToWords64<From, To, false>(from, to, length);
#endif
    if constexpr (sizeof(typename ElementStorage<From>::type) == 1)
      lookUpRun<From, DType::F32>(from, buffer, length);
    else
      widenToFloat<From>(from, buffer, length);
    return castLanes<DType::F32, To>(buffer, to, length);
  } else {
    return castLanes<From, To>(from, to, length);
  }
}

/// Casts `length` (at most kBlock) elements; `buffer` holds kBlock floats.
/// Returns the index of the first element without a result (a checked
/// integer cast), or kNoCastFailure.
template <DType From, DType To>
uint64_t castBlock(const std::byte *from, std::byte *to, size_t length,
                   std::byte *buffer, CastKernels kernels) {
  if constexpr (avx2::hasKernel(From, To)) {
    // Its whole steps; the rest (fewer than a step) below.
    static_assert(!CastElement<From, To>::kChecked,
                  "the AVX2 kernels report no failures");
    if (kernels == CastKernels::Avx2F16c) {
      size_t done = avx2::castWhole<From, To>(from, to, length, false);
      from += done * sizeof(typename ElementStorage<From>::type);
      to += done * sizeof(typename ElementStorage<To>::type);
      length -= done;
    }
  }
  if constexpr (hasIntegerCast(From, To)) {
    return castIntegerBlock<From, To>(from, to, length, buffer);
  } else if constexpr (sizeof(typename ElementStorage<From>::type) == 1) {
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
  return kNoCastFailure;
}

/// Casts `count` elements from `From` at `src` to `To` at `dst`
/// (hasFastCast(From, To)) in blocks of kBlock elements, prefetching the
/// source kPrefetchDistance ahead: an 8-bit source by table, float32 (or
/// float64) on either side directly, any other pair widened into a stack
/// buffer and narrowed from there. A large destination (kStreamingBytes,
/// or with `partOfLargeCopy` a run of a large region copy) is written with
/// streaming stores: through a second buffer, or by the widenings from
/// float16, bfloat16 and FP8 and the 16-bit lanes of bfloat16 <-> float16
/// straight from their registers (float16 -> float32 went from 0.40x to
/// 0.53x a memcpy, the 16-bit lanes gained 10-15%), as are the results of
/// the AVX2 kernels (32-byte aligned). A block is read whole
/// before it is written, so a cast between equal sizes may work in place.
/// Returns the index of the first element without a result (a checked
/// integer cast, whose elements without one become 0), or kNoCastFailure.
/// `kernels` picks the SSE2 kernels or the AVX2 ones (castRun: this CPU's;
/// the tests run both).
template <DType From, DType To>
uint64_t castRunWith(CastKernels kernels, const std::byte *src, std::byte *dst,
                     size_t count, bool partOfLargeCopy = false) {
  static_assert(hasFastCast(From, To), "no vector path for this cast");
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  constexpr size_t kBlock = 512;
  constexpr size_t kBlockBytes = kBlock * sizeof(Src);
  alignas(16) std::byte buffer[kBlock * sizeof(float)];
  alignas(16) std::byte output[kBlock * sizeof(Dst)];
  size_t start = 0;
  bool streaming = false;
  uint64_t failure = kNoCastFailure;
  // Blocks go in order: the first failure recorded is the first overall.
  auto record = [&](size_t blockStart, uint64_t blockFailure) {
    if (blockFailure != kNoCastFailure && failure == kNoCastFailure)
      failure = blockStart + blockFailure;
  };
#if defined(__SSE2__)
  uintptr_t address = reinterpret_cast<uintptr_t>(dst);
  if ((partOfLargeCopy || count * sizeof(Dst) >= kStreamingBytes) &&
      address % sizeof(Dst) == 0) {
    // Elements up to the first 16-byte boundary (32 for the 256-bit
    // stores of the AVX2 kernels) go the normal way.
    size_t alignment =
        avx2::hasKernel(From, To) && kernels == CastKernels::Avx2F16c ? 32 : 16;
    start = std::min(count, ((alignment - address % alignment) % alignment) /
                                sizeof(Dst));
    record(0, castBlock<From, To>(src, dst, start, buffer, kernels));
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
      if constexpr (avx2::hasKernel(From, To)) {
        if (kernels == CastKernels::Avx2F16c) {
          size_t done = avx2::castWhole<From, To>(from, to, length, true);
          record(start + done,
                 castBlock<From, To>(from + done * sizeof(Src),
                                     to + done * sizeof(Dst), length - done,
                                     buffer, kernels));
          continue;
        }
      }
#if defined(__SSE2__)
      // Widenings streamed as they are made: they are as fast as the
      // stores, and a pass through `output` would cost a load and a store
      // more per 16 bytes.
      if constexpr ((From == DType::F16 || From == DType::BF16) &&
                    To == DType::F32) {
        size_t done = sse2::widenToFloat<From, true>(from, to, length);
        castBlock<From, To>(from + done * sizeof(Src), to + done * sizeof(Dst),
                            length - done, buffer, kernels);
        continue;
      } else if constexpr (isFloat8Element(From) &&
                           (sizeof(Dst) == 2 || sizeof(Dst) == 4)) {
        lookUpRun<From, To, true>(from, to, length);
        continue;
      } else if constexpr ((From == DType::F16 || From == DType::BF16) &&
                           (To == DType::I64 || To == DType::U64)) {
        record(start, castHalvesToWords64<From, To, true>(from, to, length));
        continue;
      } else if constexpr (sse2::hasSixteenBitLanes(From, To) &&
                           sizeof(Dst) == 2) {
        size_t done = sse2::narrowSixteenBit<From, To, true>(from, to, length);
        castBlock<From, To>(from + done * sizeof(Src), to + done * sizeof(Dst),
                            length - done, buffer, kernels);
        continue;
      }
#endif
      record(start, castBlock<From, To>(from, output, length, buffer, kernels));
      streamOut(output, to, length * sizeof(Dst));
    } else {
      record(start, castBlock<From, To>(from, to, length, buffer, kernels));
    }
  }
#if defined(__SSE2__)
  if (streaming)
    _mm_sfence(); // streaming stores are weakly ordered
#endif
  return failure;
}

/// castRunWith this CPU's kernels.
template <DType From, DType To>
uint64_t castRun(const std::byte *src, std::byte *dst, size_t count,
                 bool partOfLargeCopy = false) {
  CastKernels kernels =
      avx2::hasKernel(From, To) ? availableKernels() : CastKernels::Sse2;
  return castRunWith<From, To>(kernels, src, dst, count, partOfLargeCopy);
}

} // namespace aoa::runtime::fastcast

#endif // AOA_RUNTIME_TRANSFORMS_LIB_FASTCAST_H
