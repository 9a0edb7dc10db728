//===- RegionCopy.cpp -----------------------------------------------------===//
//
// The copy is described as a list of dimensions in destination order
// (RegionCopyGeometry.h: extent-1 dimensions dropped, contiguous neighbours
// merged), then run by the fastest loop that fits it.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/RegionCopy.h"

#include "ElementOps.h"
#include "RegionCopyGeometry.h"
#include "aoa/runtime/transforms/Cast.h"

#include <algorithm>
#include <string>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace aoa::runtime {

namespace {

/// Transpose tiles are kTile x kTile elements: at most 8 KiB of each side
/// for 8-byte elements, so a tile's source lines stay in L1 while it is
/// written row by row. The 2-byte copies moved in SSE2 blocks take 64 x 64
/// tiles (8 KiB a side; measured 16% faster than 32 x 32 on a bfloat16
/// [4096, 11008] transpose, bench/kernels_bench.sh).
constexpr int64_t kTile = 32;
constexpr int64_t kTile16 = 64;

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
      __m128i a0 = _mm_unpacklo_epi16(v[0], v[1]), a1 = _mm_unpackhi_epi16(v[0], v[1]);
      __m128i a2 = _mm_unpacklo_epi16(v[2], v[3]), a3 = _mm_unpackhi_epi16(v[2], v[3]);
      __m128i a4 = _mm_unpacklo_epi16(v[4], v[5]), a5 = _mm_unpackhi_epi16(v[4], v[5]);
      __m128i a6 = _mm_unpacklo_epi16(v[6], v[7]), a7 = _mm_unpackhi_epi16(v[6], v[7]);
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

/// Calls body(srcOffset, dstOffset), in elements, for every index of the
/// `outer` dimensions (row-major); once, with offsets 0, when there are none.
template <typename Body>
void forEachOuterIndex(llvm::ArrayRef<CopyDim> outer, Body &&body) {
  llvm::SmallVector<int64_t, 8> index(outer.size(), 0);
  int64_t srcOffset = 0, dstOffset = 0;
  while (true) {
    body(srcOffset, dstOffset);
    size_t i = outer.size();
    while (true) {
      if (i == 0)
        return;
      --i;
      if (++index[i] < outer[i].extent) {
        srcOffset += outer[i].srcStride;
        dstOffset += outer[i].dstStride;
        break;
      }
      srcOffset -= (outer[i].extent - 1) * outer[i].srcStride;
      dstOffset -= (outer[i].extent - 1) * outer[i].dstStride;
      index[i] = 0;
    }
  }
}

/// Runs the copy; a checked cast lowers `firstFailure` to the smallest
/// destination offset (in elements, from `dst`) without a result.
template <typename Op>
void runCopy(llvm::ArrayRef<CopyDim> dims, const std::byte *src, std::byte *dst,
             uint64_t &firstFailure) {
  using Src = typename Op::Src;
  using Dst = typename Op::Dst;
  constexpr int64_t srcSize = sizeof(Src), dstSize = sizeof(Dst);
  const CopyDim &inner = dims.back();
  llvm::ArrayRef<CopyDim> outer = dims.drop_back();

  // Contiguous runs on both sides.
  if (inner.srcStride == 1 && inner.dstStride == 1) {
    forEachOuterIndex(outer, [&](int64_t s, int64_t d) {
      convertRun<Op>(src + s * srcSize, dst + d * dstSize, size_t(inner.extent),
                     d, firstFailure);
    });
    return;
  }

  // A transpose: the destination's rows run along `inner`, the source's
  // along another dimension.
  auto contiguousInSource =
      std::find_if(outer.begin(), outer.end(),
                   [](const CopyDim &dim) { return dim.srcStride == 1; });
  if (inner.dstStride == 1 && contiguousInSource != outer.end()) {
    const CopyDim rows = *contiguousInSource;
    CopyDims rest;
    for (const CopyDim &dim : outer)
      if (&dim != contiguousInSource)
        rest.push_back(dim);
    constexpr int64_t tile =
        std::is_same_v<Op, CopyOp<uint16_t>> ? kTile16 : kTile;
    forEachOuterIndex(rest, [&](int64_t s, int64_t d) {
      for (int64_t r0 = 0; r0 < rows.extent; r0 += tile) {
        int64_t r1 = std::min(r0 + tile, rows.extent);
        for (int64_t c0 = 0; c0 < inner.extent; c0 += tile) {
          int64_t c1 = std::min(c0 + tile, inner.extent);
          if constexpr (std::is_same_v<Op, CopyOp<uint16_t>>) {
            if (transposeTile16(src + s * srcSize, inner.srcStride,
                                dst + d * dstSize, rows.dstStride, r0, r1, c0,
                                c1))
              continue;
          }
          for (int64_t r = r0; r < r1; ++r) {
            const std::byte *from = src + (s + r) * srcSize;
            int64_t rowOffset = d + r * rows.dstStride;
            std::byte *to = dst + rowOffset * dstSize;
            for (int64_t c = c0; c < c1; ++c)
              storeElement<Dst>(
                  to + c * dstSize,
                  applyAt<Op>(
                      loadElement<Src>(from + c * inner.srcStride * srcSize),
                      rowOffset + c, firstFailure));
          }
        }
      }
    });
    return;
  }

  // Anything else, element by element.
  forEachOuterIndex(outer, [&](int64_t s, int64_t d) {
    for (int64_t k = 0; k < inner.extent; ++k) {
      int64_t offset = d + k * inner.dstStride;
      storeElement<Dst>(
          dst + offset * dstSize,
          applyAt<Op>(
              loadElement<Src>(src + (s + k * inner.srcStride) * srcSize),
              offset, firstFailure));
    }
  });
}

} // namespace

Status copyRegion(const TensorView &src, const Box &srcRegion,
                  const MutableTensorView &dst, const Box &dstRegion,
                  const Permutation &permutation, uint64_t *castFailure) {
  if (castFailure)
    *castFailure = kNoCastFailure;
  if (Status status =
          validateRegionCopy(src, srcRegion, dst, dstRegion, permutation);
      !status)
    return status;
  if (srcRegion.volume() == 0)
    return Status();
  CopyDims dims =
      describeCopyDims(src.shape, srcRegion, dst.shape, permutation);
  const std::byte *from =
      static_cast<const std::byte *>(src.data) +
      regionStart(srcRegion, src.shape) * int64_t(dtypeSize(src.dtype));
  std::byte *to =
      static_cast<std::byte *>(dst.data) +
      regionStart(dstRegion, dst.shape) * int64_t(dtypeSize(dst.dtype));
  uint64_t firstFailure = kNoCastFailure;
  withElementOp(src.dtype, dst.dtype, [&](auto op) {
    runCopy<decltype(op)>(dims, from, to, firstFailure);
  });
  if (firstFailure == kNoCastFailure)
    return Status();
  if (castFailure)
    *castFailure = firstFailure;
  return castFailureError(
      src.dtype, dst.dtype,
      "the element at offset " + std::to_string(firstFailure) +
          " of the destination region " + dstRegion.toString());
}

Status copyRegion(const TensorView &src, const Box &srcRegion,
                  const MutableTensorView &dst, const Box &dstRegion) {
  return copyRegion(src, srcRegion, dst, dstRegion,
                    Permutation::identity(srcRegion.rank()), nullptr);
}

} // namespace aoa::runtime
