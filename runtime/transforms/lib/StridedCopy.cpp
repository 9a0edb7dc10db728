//===- StridedCopy.cpp ----------------------------------------------------===//
#include "aoa/runtime/transforms/StridedCopy.h"

#include "RegionCopyGeometry.h"
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/StridedCopyLaunch.h"
#include "aoa/runtime/transforms/TensorView.h"

#include <cstring>
#include <limits>
#include <string>

namespace aoa::runtime {

uint64_t StridedCopy::elementCount() const {
  uint64_t count = 1;
  for (int i = 0; i < rank && i < kMaxStridedCopyRank; ++i)
    count *= uint64_t(extents[i]);
  return count;
}

Status checkStridedCopy(const StridedCopy &copy) {
  const char *hint = "the strided copy was built wrongly; this is a bug in "
                     "aoa-run, please report it";
  if (copy.rank < 0 || copy.rank > kMaxStridedCopyRank)
    return Error{"strided copy: rank " + std::to_string(copy.rank) +
                     " is outside 0.." + std::to_string(kMaxStridedCopyRank),
                 hint};
  if (!isCastSupported(copy.from, copy.to))
    return castUnsupportedError(copy.from, copy.to);
  uint64_t count = 1;
  for (int i = 0; i < copy.rank; ++i) {
    int64_t extent = copy.extents[i];
    if (extent < 0)
      return Error{"strided copy: extent " + std::to_string(extent) +
                       " of dimension " + std::to_string(i) + " is negative",
                   hint};
    if (extent != 0 &&
        count > uint64_t(std::numeric_limits<int64_t>::max()) / extent)
      return Error{"strided copy: more than 2^63 elements", hint};
    count *= uint64_t(extent);
  }
  return Status();
}

Expected<StridedCopy> describeRegionCopy(const TensorView &src,
                                         const Box &srcRegion,
                                         const MutableTensorView &dst,
                                         const Box &dstRegion,
                                         const Permutation &permutation) {
  if (Status status =
          validateRegionCopy(src, srcRegion, dst, dstRegion, permutation);
      !status)
    return status.error();
  StridedCopy copy;
  copy.from = src.dtype;
  copy.to = dst.dtype;
  copy.rank = 1;
  if (srcRegion.volume() == 0) {
    // Nothing to copy: extent 0, and pointers that are never dereferenced.
    copy.source = src.data;
    copy.destination = dst.data;
    return copy;
  }
  CopyDims dims =
      describeCopyDims(src.shape, srcRegion, dst.shape, permutation);
  if (dims.size() > size_t(kMaxStridedCopyRank))
    return regionCopyError(
        "the copy of source region " + srcRegion.toString() + " permuted by " +
            permutation.toString() + " has " + std::to_string(dims.size()) +
            " dimensions after merging contiguous ones, more than the " +
            std::to_string(kMaxStridedCopyRank) + " a strided copy handles",
        "tensors of more than 8 dimensions can be copied on the CPU only");
  copy.rank = int(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    copy.extents[i] = dims[i].extent;
    copy.sourceStrides[i] = dims[i].srcStride;
    copy.destinationStrides[i] = dims[i].dstStride;
  }
  copy.source =
      static_cast<const unsigned char *>(src.data) +
      regionStart(srcRegion, src.shape) * int64_t(dtypeSize(src.dtype));
  copy.destination =
      static_cast<unsigned char *>(dst.data) +
      regionStart(dstRegion, dst.shape) * int64_t(dtypeSize(dst.dtype));
  return copy;
}

namespace {

/// The elementwise kernel's grid, one block after another.
template <typename Op, bool Aligned, typename Index>
void runElementwiseOnHost(const ElementwiseShape<Index> &shape) {
  constexpr Index pass = Index(kElementwiseThreads) * kElementsPerThread;
  for (Index block = 0; block < shape.count; block += pass)
    for (Index thread = 0; thread < kElementwiseThreads; ++thread)
      copyElementGroup<Op, Aligned>(shape, Index(block + thread),
                                    Index(kElementwiseThreads));
}

/// The transpose kernel's tiles, one after another; for each, all threads
/// load (phase 1) before any stores (phase 2), as the kernel's barrier
/// makes them.
template <typename Op, bool Aligned, bool Pairs>
void runTransposeOnHost(const TransposeShape &shape) {
  TransposeTile<typename Op::Dst> tile[kTransposeTile];
  for (int64_t batch = 0; batch < shape.batches; ++batch)
    for (int64_t rowTile = 0; rowTile < shape.rowTiles; ++rowTile)
      for (int64_t columnTile = 0; columnTile < shape.columnTiles;
           ++columnTile) {
        TileOrigin origin = tileOrigin(shape, batch, rowTile, columnTile);
        for (unsigned y = 0; y < kTransposeBlockRows; ++y)
          for (unsigned x = 0; x < kTransposeBlockWidth; ++x)
            loadTransposeTile<Op, Aligned, Pairs>(shape, origin, x, y, tile);
        for (unsigned y = 0; y < kTransposeBlockRows; ++y)
          for (unsigned x = 0; x < kTransposeBlockWidth; ++x)
            storeTransposeTile<Op, Aligned, Pairs>(shape, origin, x, y, tile);
      }
}

template <typename Op, bool Aligned>
void runLaunchOnHost(const StridedCopyLaunch &launch) {
  switch (launch.path) {
  case StridedCopyPath::Empty:
  case StridedCopyPath::Contiguous:
    return;
  case StridedCopyPath::Elementwise32:
    return runElementwiseOnHost<Op, Aligned>(launch.elementwise32);
  case StridedCopyPath::Elementwise64:
    return runElementwiseOnHost<Op, Aligned>(launch.elementwise64);
  case StridedCopyPath::Transpose:
    if constexpr (MayTranspose<Op>::value) {
      if (launch.transposeInPairs)
        return runTransposeOnHost<Op, Aligned, true>(launch.transpose);
      return runTransposeOnHost<Op, Aligned, false>(launch.transpose);
    }
    return;
  }
}

} // namespace

void runStridedCopyOnHost(const StridedCopy &copy) {
  Expected<StridedCopyLaunch> launch = planStridedCopyLaunch(copy);
  if (!launch)
    return;
  if (launch->path == StridedCopyPath::Contiguous) {
    std::memcpy(launch->destination, launch->source, launch->contiguousBytes);
    return;
  }
  withLaunchElement(*launch, [&](auto op) {
    using Op = decltype(op);
    if (launch->aligned)
      runLaunchOnHost<Op, true>(*launch);
    else
      runLaunchOnHost<Op, false>(*launch);
  });
}

} // namespace aoa::runtime
