//===- TransposeTile.h - Transposing a tile in SSE2 blocks ------*- C++ -*-===//
//
// Private to the runtime library: how RegionCopy.cpp moves one tile of a
// transpose (the destination's rows along a dimension that is strided in
// the source) for copies of 2- and 4-byte words and for unchecked casts.
// A tile goes in 8 x 8 (2-byte) or 4 x 4 (4-byte) blocks of SSE2 unpacks; a
// cast is fused with it by transposing the narrower-or-equal 2- or 4-byte
// side in a stack buffer and casting whole rows or columns there with the
// vector casts (FastCast.h). The next tile's source lines are prefetched,
// and a large destination is written a tile row at a time with streaming
// stores from a buffer: whole lines, and no read of the lines written.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_TRANSPOSETILE_H
#define AOA_RUNTIME_TRANSFORMS_LIB_TRANSPOSETILE_H

#include "ElementOps.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace aoa::runtime {

/// Transposes the tile [r0, r1) x [c0, c1) of 2-byte elements, element
/// (r, c) read at src[r + c * srcStride] and written at
/// dst[r * dstStride + c], in 8 x 8 blocks of SSE2 unpacks (a bfloat16
/// transpose, the common one, is otherwise one scalar move per element).
/// False, with nothing done, where SSE2 is not available or the tile is not
/// made of whole blocks (the caller then copies it element by element).
inline bool transposeTile16(const std::byte *src, int64_t srcStride,
                            std::byte *dst, int64_t dstStride, int64_t r0,
                            int64_t r1, int64_t c0, int64_t c1) {
#if defined(__SSE2__)
  if ((r1 - r0) % 8 != 0 || (c1 - c0) % 8 != 0)
    return false;
  for (int64_t rb = r0; rb < r1; rb += 8)
    for (int64_t cb = c0; cb < c1; cb += 8) {
      __m128i v[8];
      for (int j = 0; j < 8; ++j)
        v[j] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(
            src + 2 * (rb + (cb + j) * srcStride)));
      __m128i a0 = _mm_unpacklo_epi16(v[0], v[1]),
              a1 = _mm_unpackhi_epi16(v[0], v[1]);
      __m128i a2 = _mm_unpacklo_epi16(v[2], v[3]),
              a3 = _mm_unpackhi_epi16(v[2], v[3]);
      __m128i a4 = _mm_unpacklo_epi16(v[4], v[5]),
              a5 = _mm_unpackhi_epi16(v[4], v[5]);
      __m128i a6 = _mm_unpacklo_epi16(v[6], v[7]),
              a7 = _mm_unpackhi_epi16(v[6], v[7]);
      __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
      __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
      __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
      __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
      // Row rb + i of the block, columns cb .. cb + 7.
      __m128i w[8] = {_mm_unpacklo_epi64(b0, b4), _mm_unpackhi_epi64(b0, b4),
                      _mm_unpacklo_epi64(b1, b5), _mm_unpackhi_epi64(b1, b5),
                      _mm_unpacklo_epi64(b2, b6), _mm_unpackhi_epi64(b2, b6),
                      _mm_unpacklo_epi64(b3, b7), _mm_unpackhi_epi64(b3, b7)};
      for (int i = 0; i < 8; ++i)
        _mm_storeu_si128(
            reinterpret_cast<__m128i *>(dst + 2 * ((rb + i) * dstStride + cb)),
            w[i]);
    }
  return true;
#else
  (void)src, (void)srcStride, (void)dst, (void)dstStride;
  (void)r0, (void)r1, (void)c0, (void)c1;
  return false;
#endif
}

/// Transposes as transposeTile16 does, for 4-byte elements in 4 x 4 blocks
/// of SSE2 unpacks; the tile must be made of whole blocks.
inline bool transposeTile32(const std::byte *src, int64_t srcStride,
                            std::byte *dst, int64_t dstStride, int64_t r0,
                            int64_t r1, int64_t c0, int64_t c1) {
#if defined(__SSE2__)
  if ((r1 - r0) % 4 != 0 || (c1 - c0) % 4 != 0)
    return false;
  for (int64_t rb = r0; rb < r1; rb += 4)
    for (int64_t cb = c0; cb < c1; cb += 4) {
      __m128i v[4];
      for (int j = 0; j < 4; ++j)
        v[j] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(
            src + 4 * (rb + (cb + j) * srcStride)));
      __m128i a0 = _mm_unpacklo_epi32(v[0], v[1]);
      __m128i a1 = _mm_unpacklo_epi32(v[2], v[3]);
      __m128i a2 = _mm_unpackhi_epi32(v[0], v[1]);
      __m128i a3 = _mm_unpackhi_epi32(v[2], v[3]);
      __m128i w[4] = {_mm_unpacklo_epi64(a0, a1), _mm_unpackhi_epi64(a0, a1),
                      _mm_unpacklo_epi64(a2, a3), _mm_unpackhi_epi64(a2, a3)};
      for (int i = 0; i < 4; ++i)
        _mm_storeu_si128(
            reinterpret_cast<__m128i *>(dst + 4 * ((rb + i) * dstStride + cb)),
            w[i]);
    }
  return true;
#else
  (void)src, (void)srcStride, (void)dst, (void)dstStride;
  (void)r0, (void)r1, (void)c0, (void)c1;
  return false;
#endif
}

/// transposeTile16 or transposeTile32 for `Bytes`-byte elements; false for
/// other sizes.
template <size_t Bytes>
inline bool transposeTile(const std::byte *src, int64_t srcStride,
                          std::byte *dst, int64_t dstStride, int64_t r0,
                          int64_t r1, int64_t c0, int64_t c1) {
  if constexpr (Bytes == 2)
    return transposeTile16(src, srcStride, dst, dstStride, r0, r1, c0, c1);
  else if constexpr (Bytes == 4)
    return transposeTile32(src, srcStride, dst, dstStride, r0, r1, c0, c1);
  else
    return false;
}

/// Whether runCopy moves an operation's transposes tile by tile with
/// moveTile: copies of 2- and 4-byte words, and unchecked casts with a 2-
/// or 4-byte side (checked casts record failing offsets element by
/// element).
template <typename Op> constexpr bool blockTranspose() {
  constexpr size_t srcSize = sizeof(typename Op::Src);
  constexpr size_t dstSize = sizeof(typename Op::Dst);
  if constexpr (Op::isCopy)
    return srcSize == 2 || srcSize == 4;
  else
    return !Op::kChecked &&
           (srcSize == 2 || srcSize == 4 || dstSize == 2 || dstSize == 4);
}
template <typename Op>
constexpr bool kBlockTranspose =
#if defined(__SSE2__)
    blockTranspose<Op>();
#else
    false;
#endif

/// The tile of moveTile: kBlockTileRows<Op> rows (along the source's
/// contiguous lines) by kBlockTileColumns<Op> columns (along the
/// destination's), 128 along a 1- or 2-byte side and 64 along a 4- or
/// 8-byte one (and 64 with an 8-byte element on the other side), so that
/// one tile buffer is at most 32 KiB (L1) and most lines read or written in
/// a tile 256 bytes (float32 -> bfloat16 went from 75 to 68 ms with 64 x
/// 128 tiles instead of 64 x 64; bfloat16 -> float32, 128 x 64, stayed at
/// 53 ms, its 270 MB moved at the 5-5.5 GB/s of every transpose here).
/// Measured on a bfloat16 [4096, 11008] transpose (a standalone copy of
/// this loop, one run, memcpy of the same bytes 14.5 ms): 128 x 128 tiles
/// with prefetching and streaming stores 34 ms, 64 x 64 ones 54 ms, the
/// former 64 x 64 tiles without either 57 ms.
template <typename Op>
constexpr int64_t kBlockTileRows = sizeof(typename Op::Src) <= 2 &&
                                           sizeof(typename Op::Dst) <= 4
                                       ? 128
                                       : 64;
template <typename Op>
constexpr int64_t kBlockTileColumns = sizeof(typename Op::Dst) <= 2 &&
                                              sizeof(typename Op::Src) <= 4
                                          ? 128
                                          : 64;

/// The stack buffers of moveTile: the tile on its way to the destination,
/// and for a cast the transposed or cast tile before that.
template <typename Op> struct TileBuffers {
  static constexpr size_t kBytes =
      size_t(kBlockTileRows<Op> * kBlockTileColumns<Op>) *
      std::max(sizeof(typename Op::Src), sizeof(typename Op::Dst));
  alignas(16) std::byte output[kBytes];
  alignas(16) std::byte cast[Op::isCopy ? 16 : kBytes];
};

/// Asks for `rowBytes` at each of `columns` source lines `strideBytes`
/// apart from `first` (the next tile's): its lines are far apart, so the
/// hardware prefetcher does not see them coming, and the misses of one tile
/// at a time leave the memory idle.
inline void prefetchTile(const std::byte *first, int64_t strideBytes,
                         int64_t rowBytes, int64_t columns) {
#if defined(__GNUC__)
  for (int64_t c = 0; c < columns; ++c) {
    const std::byte *line = first + c * strideBytes;
    for (int64_t offset = 0; offset < rowBytes; offset += 64)
      __builtin_prefetch(line + offset);
    __builtin_prefetch(line + rowBytes - 1);
  }
#else
  (void)first, (void)strideBytes, (void)rowBytes, (void)columns;
#endif
}

/// Transposes, and for a cast converts, the `rows` x `columns` tile whose
/// element (r, c) is at tileSrc[r + c * srcStride] into
/// out[r * outStride + c] (strides in elements). `rows` and `columns` are
/// multiples of 8 and at most kBlockTileRows<Op> and kBlockTileColumns<Op>.
template <typename Op>
void transposeTileInto(const std::byte *tileSrc, int64_t srcStride,
                       std::byte *out, int64_t outStride, int64_t rows,
                       int64_t columns, std::byte *castBuffer) {
  constexpr size_t srcSize = sizeof(typename Op::Src);
  constexpr size_t dstSize = sizeof(typename Op::Dst);
  if constexpr (Op::isCopy) {
    transposeTile<srcSize>(tileSrc, srcStride, out, outStride, 0, rows, 0,
                           columns);
  } else {
    uint64_t noFailure = kNoCastFailure; // unchecked casts only
    if constexpr (srcSize == 2 || srcSize == 4) {
      // Transposed first, then cast row by row.
      transposeTile<srcSize>(tileSrc, srcStride, castBuffer, columns, 0, rows,
                             0, columns);
      for (int64_t r = 0; r < rows; ++r)
        convertRun<Op>(castBuffer + r * columns * int64_t(srcSize),
                       out + r * outStride * int64_t(dstSize), size_t(columns),
                       0, noFailure);
    } else {
      // The source's columns (contiguous) cast first, then transposed.
      for (int64_t c = 0; c < columns; ++c)
        convertRun<Op>(tileSrc + c * srcStride * int64_t(srcSize),
                       castBuffer + c * rows * int64_t(dstSize), size_t(rows),
                       0, noFailure);
      transposeTile<dstSize>(castBuffer, rows, out, outStride, 0, rows, 0,
                             columns);
    }
  }
}

/// Moves the `rows` x `columns` tile at `tileSrc` (as transposeTileInto) to
/// tileDst[r * dstStride + c]: straight there, or with `streaming` (a large
/// destination whose tile rows are 16-byte aligned) through a buffer and
/// streaming stores. False, with nothing done, for a tile that is not made
/// of whole blocks (the caller moves it element by element).
template <typename Op>
bool moveTile(const std::byte *tileSrc, int64_t srcStride, std::byte *tileDst,
              int64_t dstStride, int64_t rows, int64_t columns, bool streaming,
              TileBuffers<Op> &buffers) {
  constexpr int64_t dstSize = sizeof(typename Op::Dst);
  if (rows % 8 != 0 || columns % 8 != 0)
    return false;
#if defined(__SSE2__)
  int64_t rowBytes = columns * dstSize, strideBytes = dstStride * dstSize;
  if (streaming && reinterpret_cast<uintptr_t>(tileDst) % 16 == 0 &&
      strideBytes % 16 == 0 && rowBytes % 16 == 0) {
    transposeTileInto<Op>(tileSrc, srcStride, buffers.output, columns, rows,
                          columns, buffers.cast);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < rowBytes; k += 16)
        _mm_stream_si128(
            reinterpret_cast<__m128i *>(tileDst + r * strideBytes + k),
            _mm_load_si128(reinterpret_cast<const __m128i *>(
                buffers.output + r * rowBytes + k)));
    return true;
  }
#endif
  transposeTileInto<Op>(tileSrc, srcStride, tileDst, dstStride, rows, columns,
                        buffers.cast);
  return true;
}

/// Orders the streaming stores of moveTile before what follows (they are
/// weakly ordered).
inline void finishStreaming(bool streaming) {
#if defined(__SSE2__)
  if (streaming)
    _mm_sfence();
#else
  (void)streaming;
#endif
}

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_LIB_TRANSPOSETILE_H
