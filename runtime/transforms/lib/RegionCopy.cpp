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
#include "TransposeTile.h"
#include "aoa/runtime/transforms/Cast.h"

#include <algorithm>
#include <string>
#include <type_traits>

namespace aoa::runtime {

namespace {

/// Transpose tiles moved element by element are kTile x kTile elements:
/// at most 8 KiB of each side for 8-byte elements, so a tile's source lines
/// stay in L1 while it is written row by row. Those moved in SSE2 blocks
/// take larger tiles (TransposeTile.h).
constexpr int64_t kTile = 32;

/// The shortest contiguous run of a large copy written with streaming
/// stores: a shorter one shares too many of its cache lines, at its ends,
/// with the runs around it.
constexpr int64_t kMinimumStreamedRunBytes = 4096;

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

  // Contiguous runs on both sides (a pack or unpack, with a cast or not).
  // Runs of a large destination, each of whole pages or more, are cast
  // with streaming stores, as one large run would be.
  if (inner.srcStride == 1 && inner.dstStride == 1) {
    int64_t volume = 1;
    for (const CopyDim &dim : dims)
      volume *= dim.extent;
    bool partOfLargeCopy =
        uint64_t(volume) * dstSize >= fastcast::kStreamingBytes &&
        inner.extent * dstSize >= kMinimumStreamedRunBytes;
    forEachOuterIndex(outer, [&](int64_t s, int64_t d) {
      convertRun<Op>(src + s * srcSize, dst + d * dstSize, size_t(inner.extent),
                     d, firstFailure, partOfLargeCopy);
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
    // Copies of 2- and 4-byte words, and unchecked casts, move in SSE2
    // blocks (TransposeTile.h), through a tile buffer and streaming stores
    // into a large destination; the others element by element.
    constexpr bool blocks = kBlockTranspose<Op>;
    constexpr int64_t rowTile = blocks ? kBlockTileRows<Op> : kTile;
    constexpr int64_t columnTile = blocks ? kBlockTileColumns<Op> : kTile;
    bool streaming = false;
    if constexpr (blocks) {
      int64_t volume = 1;
      for (const CopyDim &dim : dims)
        volume *= dim.extent;
      streaming = uint64_t(volume) * dstSize >= fastcast::kStreamingBytes;
    }
    std::conditional_t<blocks, TileBuffers<Op>, char> buffers;
    (void)buffers;
    forEachOuterIndex(rest, [&](int64_t s, int64_t d) {
      for (int64_t r0 = 0; r0 < rows.extent; r0 += rowTile) {
        int64_t r1 = std::min(r0 + rowTile, rows.extent);
        for (int64_t c0 = 0; c0 < inner.extent; c0 += columnTile) {
          int64_t c1 = std::min(c0 + columnTile, inner.extent);
          if constexpr (blocks) {
            // The next tile's source lines, while this one is moved.
            const std::byte *rowsStart = src + (s + r0) * srcSize;
            int64_t columnBytes = inner.srcStride * srcSize;
            prefetchTile(rowsStart + c1 * columnBytes, columnBytes,
                         (r1 - r0) * srcSize,
                         std::min(c1 + columnTile, inner.extent) - c1);
            if (moveTile<Op>(rowsStart + c0 * columnBytes, inner.srcStride,
                             dst + (d + r0 * rows.dstStride + c0) * dstSize,
                             rows.dstStride, r1 - r0, c1 - c0, streaming,
                             buffers))
              continue;
          }
          for (int64_t r = r0; r < r1; ++r) {
            const std::byte *from = src + (s + r) * srcSize;
            int64_t rowOffset = d + r * rows.dstStride;
            std::byte *to = dst + rowOffset * dstSize;
            for (int64_t c = c0; c < c1; ++c)
              store<Dst>(
                  to + c * dstSize,
                  applyAt<Op>(load<Src>(from + c * inner.srcStride * srcSize),
                              rowOffset + c, firstFailure));
          }
        }
      }
    });
    if constexpr (blocks)
      finishStreaming(streaming);
    return;
  }

  // Anything else, element by element.
  forEachOuterIndex(outer, [&](int64_t s, int64_t d) {
    for (int64_t k = 0; k < inner.extent; ++k) {
      int64_t offset = d + k * inner.dstStride;
      store<Dst>(
          dst + offset * dstSize,
          applyAt<Op>(load<Src>(src + (s + k * inner.srcStride) * srcSize),
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
