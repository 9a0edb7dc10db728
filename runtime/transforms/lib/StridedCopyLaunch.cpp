//===- StridedCopyLaunch.cpp ----------------------------------------------===//
//
// The copy is first brought to its simplest form (extent-1 dimensions
// dropped, neighbours contiguous in both tensors merged), so that a copy
// described by hand runs as well as one from describeRegionCopy, and the
// path is chosen on that form.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/StridedCopyLaunch.h"

#include <algorithm>
#include <cstdint>

namespace aoa::runtime {

namespace {

struct LaunchDim {
  int64_t extent;
  int64_t sourceStride;
  int64_t destinationStride;
};

/// The dimensions of `copy` without extent-1 ones and with contiguous
/// neighbours merged; at least one. Precondition: no extent is 0.
int simplifiedDims(const StridedCopy &copy,
                   LaunchDim (&dims)[kMaxStridedCopyRank]) {
  int rank = 0;
  for (int i = 0; i < copy.rank; ++i) {
    LaunchDim dim{copy.extents[i], copy.sourceStrides[i],
                  copy.destinationStrides[i]};
    if (dim.extent == 1)
      continue;
    if (rank > 0) {
      LaunchDim &outer = dims[rank - 1];
      if (outer.sourceStride == dim.sourceStride * dim.extent &&
          outer.destinationStride == dim.destinationStride * dim.extent) {
        outer = {outer.extent * dim.extent, dim.sourceStride,
                 dim.destinationStride};
        continue;
      }
    }
    dims[rank++] = dim;
  }
  if (rank == 0)
    dims[rank++] = {1, 1, 1};
  return rank;
}

bool isAligned(const void *pointer, uint64_t alignment) {
  return reinterpret_cast<uintptr_t>(pointer) % alignment == 0;
}

/// Moves a same-dtype copy whose innermost dimension is contiguous on both
/// sides as the widest words (up to 16 bytes) that every run start of both
/// sides is aligned to and that divide the run.
void widenCopyWords(StridedCopyLaunch &launch, LaunchDim *dims, int rank) {
  LaunchDim &inner = dims[rank - 1];
  if (inner.sourceStride != 1 || inner.destinationStride != 1)
    return;
  uint64_t elementBytes = launch.copyWordBytes;
  for (uint64_t word = 16; word > elementBytes; word /= 2) {
    bool fits = uint64_t(inner.extent) * elementBytes % word == 0 &&
                isAligned(launch.source, word) &&
                isAligned(launch.destination, word);
    for (int i = 0; fits && i + 1 < rank; ++i)
      fits = (uint64_t(dims[i].sourceStride) * elementBytes) % word == 0 &&
             (uint64_t(dims[i].destinationStride) * elementBytes) % word == 0;
    if (!fits)
      continue;
    int64_t ratio = int64_t(word / elementBytes);
    inner.extent /= ratio;
    for (int i = 0; i + 1 < rank; ++i) {
      dims[i].sourceStride /= ratio;
      dims[i].destinationStride /= ratio;
    }
    launch.copyWordBytes = unsigned(word);
    return;
  }
}

/// Moves a cast whose innermost dimension is contiguous on both sides as
/// vectors of kCastLanes elements (CastLanes) when every vector of both
/// sides is aligned (to its size, at most 16 bytes): the innermost extent and
/// every outer stride are multiples of the lanes, and both base pointers are
/// aligned. Returns the elements a vector holds (1 when the cast stays element
/// by element).
uint64_t castInLanes(StridedCopyLaunch &launch, LaunchDim *dims, int rank) {
  LaunchDim &inner = dims[rank - 1];
  if (inner.sourceStride != 1 || inner.destinationStride != 1)
    return 1;
  uint64_t fromBytes = dtypeSize(launch.from), toBytes = dtypeSize(launch.to);
  // kCastLanes<from, to>: 16 bytes on the narrower side.
  int64_t lanes = int64_t(16 / std::min(fromBytes, toBytes));
  // LaneVector's alignment: the vector's size, at most 16 bytes.
  auto vectorAlignment = [&](uint64_t bytes) {
    return std::min<uint64_t>(uint64_t(lanes) * bytes, 16);
  };
  bool fits = inner.extent % lanes == 0 &&
              isAligned(launch.source, vectorAlignment(fromBytes)) &&
              isAligned(launch.destination, vectorAlignment(toBytes));
  for (int i = 0; fits && i + 1 < rank; ++i)
    fits = dims[i].sourceStride % lanes == 0 &&
           dims[i].destinationStride % lanes == 0;
  if (!fits)
    return 1;
  inner.extent /= lanes;
  for (int i = 0; i + 1 < rank; ++i) {
    dims[i].sourceStride /= lanes;
    dims[i].destinationStride /= lanes;
  }
  launch.castInLanes = true;
  return uint64_t(lanes);
}

template <typename Index>
ElementwiseShape<Index> makeElementwiseShape(const StridedCopyLaunch &launch,
                                             const LaunchDim *dims, int rank,
                                             uint64_t count) {
  ElementwiseShape<Index> shape;
  shape.rank = rank;
  shape.count = Index(count);
  for (int i = 0; i < rank; ++i) {
    shape.extents[i] = IndexDivider<Index>::type::make(Index(dims[i].extent));
    shape.sourceStrides[i] = dims[i].sourceStride;
    shape.destinationStrides[i] = dims[i].destinationStride;
  }
  shape.source = static_cast<const unsigned char *>(launch.source);
  shape.destination = static_cast<unsigned char *>(launch.destination);
  shape.castFailure = launch.castFailure;
  return shape;
}

/// The dimension a tiled transpose reads along: one contiguous in the
/// source, other than the innermost, which must be contiguous in the
/// destination but not in the source; -1 when the copy is no transpose
/// or too thin for tiles.
int transposeRowDim(const LaunchDim *dims, int rank) {
  if (rank < 2)
    return -1;
  const LaunchDim &inner = dims[rank - 1];
  if (inner.destinationStride != 1 || inner.sourceStride == 1 ||
      inner.extent < kTransposeMinExtent)
    return -1;
  for (int i = 0; i + 1 < rank; ++i)
    if (dims[i].sourceStride == 1 && dims[i].extent >= kTransposeMinExtent)
      return i;
  return -1;
}

TransposeShape makeTransposeShape(const StridedCopyLaunch &launch,
                                  const LaunchDim *dims, int rank, int rowDim) {
  const LaunchDim &rows = dims[rowDim];
  const LaunchDim &columns = dims[rank - 1];
  TransposeShape shape;
  shape.rows = rows.extent;
  shape.columns = columns.extent;
  shape.rowSourceStride = rows.sourceStride;
  shape.rowDestinationStride = rows.destinationStride;
  shape.columnSourceStride = columns.sourceStride;
  shape.columnDestinationStride = columns.destinationStride;
  shape.rowTiles = (rows.extent + kTransposeTile - 1) / kTransposeTile;
  shape.columnTiles = (columns.extent + kTransposeTile - 1) / kTransposeTile;
  for (int i = 0; i + 1 < rank; ++i) {
    if (i == rowDim)
      continue;
    shape.batchExtents[shape.batchRank] = dims[i].extent;
    shape.batchSourceStrides[shape.batchRank] = dims[i].sourceStride;
    shape.batchDestinationStrides[shape.batchRank] = dims[i].destinationStride;
    shape.batches *= dims[i].extent;
    ++shape.batchRank;
  }
  shape.source = static_cast<const unsigned char *>(launch.source);
  shape.destination = static_cast<unsigned char *>(launch.destination);
  return shape;
}

/// Whether a transpose can move two rows (as one load) and two columns (as
/// one store) at a time: both extents even, so that no pair straddles a
/// tile's edge; every stride of the tiles' pairs even; both tensors aligned
/// to pairs (and elements: `aligned`).
bool canTransposeInPairs(const StridedCopyLaunch &launch,
                         const TransposeShape &shape) {
  auto even = [](int64_t value) { return value % 2 == 0; };
  bool pairs = launch.aligned && even(shape.rows) && even(shape.columns) &&
               even(shape.columnSourceStride) &&
               even(shape.rowDestinationStride) &&
               isAligned(launch.source, 2 * dtypeSize(launch.from)) &&
               isAligned(launch.destination, 2 * dtypeSize(launch.to));
  for (int i = 0; pairs && i < shape.batchRank; ++i)
    pairs = even(shape.batchSourceStrides[i]) &&
            even(shape.batchDestinationStrides[i]);
  return pairs;
}

} // namespace

Expected<StridedCopyLaunch> planStridedCopyLaunch(const StridedCopy &copy) {
  if (Status status = checkStridedCopy(copy); !status)
    return status.error();
  StridedCopyLaunch launch;
  launch.isCopy = copy.from == copy.to;
  launch.copyWordBytes = unsigned(dtypeSize(copy.from));
  launch.from = copy.from;
  launch.to = copy.to;
  launch.source = copy.source;
  launch.destination = copy.destination;
  launch.castFailure =
      castMayFail(copy.from, copy.to) ? copy.castFailure : nullptr;
  uint64_t count = copy.elementCount();
  if (count == 0)
    return launch; // Empty

  LaunchDim dims[kMaxStridedCopyRank];
  int rank = simplifiedDims(copy, dims);
  if (launch.isCopy && rank == 1 && dims[0].sourceStride == 1 &&
      dims[0].destinationStride == 1) {
    launch.path = StridedCopyPath::Contiguous;
    launch.contiguousBytes = count * launch.copyWordBytes;
    return launch;
  }
  if (launch.isCopy) {
    widenCopyWords(launch, dims, rank);
    count /= launch.copyWordBytes / dtypeSize(copy.from);
    launch.aligned = isAligned(launch.source, launch.copyWordBytes) &&
                     isAligned(launch.destination, launch.copyWordBytes);
  } else {
    launch.aligned = isAligned(launch.source, dtypeSize(copy.from)) &&
                     isAligned(launch.destination, dtypeSize(copy.to));
  }

  // Casts with an integer or bool side run element by element (see the
  // header): neither tiles nor lanes are instantiated for them.
  bool floatCast = isFloatingDType(copy.from) && isFloatingDType(copy.to);
  int rowDim = launch.isCopy || floatCast ? transposeRowDim(dims, rank) : -1;
  if (rowDim < 0 && !launch.isCopy && floatCast && launch.aligned)
    count /= castInLanes(launch, dims, rank);
  if (rowDim >= 0) {
    launch.path = StridedCopyPath::Transpose;
    launch.transpose = makeTransposeShape(launch, dims, rank, rowDim);
    launch.transposeInPairs = canTransposeInPairs(launch, launch.transpose);
  } else if (count < kNarrowIndexLimit) {
    launch.path = StridedCopyPath::Elementwise32;
    launch.elementwise32 =
        makeElementwiseShape<uint32_t>(launch, dims, rank, count);
  } else {
    launch.path = StridedCopyPath::Elementwise64;
    launch.elementwise64 =
        makeElementwiseShape<uint64_t>(launch, dims, rank, count);
  }
  return launch;
}

} // namespace aoa::runtime
