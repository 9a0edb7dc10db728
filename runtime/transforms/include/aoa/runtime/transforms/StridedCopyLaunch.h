//===- StridedCopyLaunch.h - How a strided copy runs on a GPU ---*- C++ -*-===//
//
// Shared by the CPU copies and the CUDA kernels
// (runtime/backends/nccl/lib/cuda); included by C++ and by CUDA sources (no
// LLVM, no CUDA types). A StridedCopy runs one of three ways, chosen once on
// the host by planStridedCopyLaunch:
//
//  - Contiguous: a same-dtype copy of one contiguous run, as a memcpy
//    (cudaMemcpyAsync on the GPU).
//  - Transpose: the destination's innermost dimension is strided in the
//    source while another dimension is contiguous there. 64x64 tiles are
//    staged in shared memory, read along one axis and written along the
//    other, so both sides are coalesced (and, as on the CPU, cache-friendly).
//  - Elementwise: anything else. Elements are taken in row-major order of
//    the iteration space, a few per thread (all loaded before any is stored,
//    so each thread has several loads in flight), their offsets found by
//    division by the extents: by multiply and shift with precomputed
//    constants when the copy has fewer than 2^31 elements, by plain 64-bit
//    division beyond. A same-dtype copy with a contiguous innermost run moves
//    words of up to 16 bytes where the alignment allows; a cast with one
//    moves vectors of consecutive elements (CastLanes: 16 bytes on the
//    narrower side), converted lane by lane.
//
// Casts that involve an integer or bool dtype always run elementwise,
// element by element: they are rare, and this keeps the kernels of the 78
// such pairs few. A checked cast (StridedCopyElement.h) records the
// smallest destination offset of an element without a result in the copy's
// cast-failure word (atomicMin on the GPU); unchecked operations compile
// without that code.
//
// The bodies below are written for one thread of one block, with the block
// and thread indices as arguments, so the host runs the very same code by
// looping over blocks and threads (runStridedCopyOnHost, phase by phase for
// the tiles). That is how the kernels' index arithmetic is tested on
// machines without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_STRIDEDCOPYLAUNCH_H
#define AOA_RUNTIME_TRANSFORMS_STRIDEDCOPYLAUNCH_H

#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/transforms/HostDevice.h"
#include "aoa/runtime/transforms/StridedCopy.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <cstdint>
#include <type_traits>

namespace aoa::runtime {

/// Threads per block of the elementwise kernel, and elements per thread and
/// pass of its loop.
constexpr unsigned kElementwiseThreads = 256;
constexpr unsigned kElementsPerThread = 4;
/// Transpose tiles are kTransposeTile x kTransposeTile elements, moved by a
/// block of kTransposeBlockWidth x kTransposeBlockRows threads: each thread
/// moves kTransposeLanes x kTransposeSteps (16) elements of a tile and loads
/// all of them before it stores any. A transpose is bound by the bytes in
/// flight: 32 x 32 tiles with 4 elements a thread ran at 0.25 (bf16) to 0.45
/// (f32) of a memcpy's bandwidth on an H200 (bench/RESULTS.md).
constexpr unsigned kTransposeTile = 64;
constexpr unsigned kTransposeBlockWidth = 32;
constexpr unsigned kTransposeBlockRows = 8;
constexpr unsigned kTransposeThreads =
    kTransposeBlockWidth * kTransposeBlockRows;
constexpr unsigned kTransposeLanes = kTransposeTile / kTransposeBlockWidth;
constexpr unsigned kTransposeSteps = kTransposeTile / kTransposeBlockRows;
/// Below this extent on either side a tile would be mostly idle threads;
/// such copies run elementwise.
constexpr int64_t kTransposeMinExtent = 16;
/// The elementwise kernel indexes with 32 bits (and fast division) below
/// this many elements.
constexpr uint64_t kNarrowIndexLimit = uint64_t(1) << 31;

/// Division of 32-bit indices below 2^31 by an invariant divisor in
/// [1, 2^31], with a multiply-high, an add and a shift (Granlund and
/// Montgomery, "Division by invariant integers using multiplication", as
/// PyTorch's IntDivider): with s = ceil(log2(d)) and
/// m = floor(2^32 (2^s - d) / d) + 1, n / d = (mulhi(n, m) + n) >> s. The
/// sum stays below 2^32 because n < 2^31.
struct FastDivider32 {
  uint32_t divisor = 1;
  uint32_t multiplier = 1;
  uint32_t shift = 0;

  static FastDivider32 make(uint32_t divisor) {
    FastDivider32 result;
    result.divisor = divisor;
    result.shift = 0;
    while ((uint64_t(1) << result.shift) < divisor)
      ++result.shift;
    uint64_t one = 1;
    result.multiplier =
        uint32_t((one << 32) * ((one << result.shift) - divisor) / divisor + 1);
    return result;
  }

  AOA_HOST_DEVICE uint32_t quotient(uint32_t n) const {
#ifdef __CUDA_ARCH__
    return (__umulhi(n, multiplier) + n) >> shift;
#else
    uint64_t high = (uint64_t(n) * multiplier) >> 32;
    return uint32_t((high + n) >> shift);
#endif
  }
};

/// 64-bit division (copies of 2^31 elements or more; rare and slower).
struct PlainDivider64 {
  uint64_t divisor = 1;

  static PlainDivider64 make(uint64_t divisor) { return {divisor}; }
  AOA_HOST_DEVICE uint64_t quotient(uint64_t n) const { return n / divisor; }
};

template <typename Index> struct IndexDivider;
template <> struct IndexDivider<uint32_t> { using type = FastDivider32; };
template <> struct IndexDivider<uint64_t> { using type = PlainDivider64; };

/// The elementwise kernel's argument: the copy's dimensions (merged; rank at
/// least 1), with dividers for all but the outermost extent, and the
/// pointers.
template <typename Index> struct ElementwiseShape {
  int rank = 1;
  Index count = 0;
  typename IndexDivider<Index>::type extents[kMaxStridedCopyRank];
  int64_t sourceStrides[kMaxStridedCopyRank] = {};
  int64_t destinationStrides[kMaxStridedCopyRank] = {};
  const unsigned char *source = nullptr;
  unsigned char *destination = nullptr;
  /// StridedCopy::castFailure (checked casts only).
  unsigned long long *castFailure = nullptr;
};

/// The transpose kernel's argument. `rows` is the dimension the tiles read
/// along (contiguous in the source), `columns` the one they write along
/// (the innermost, contiguous in the destination); the other dimensions
/// form a batch of independent transposes, enumerated row-major.
struct TransposeShape {
  int64_t rows = 0;
  int64_t columns = 0;
  int64_t rowSourceStride = 0;
  int64_t rowDestinationStride = 0;
  int64_t columnSourceStride = 0;
  int64_t columnDestinationStride = 0;
  int64_t rowTiles = 0;
  int64_t columnTiles = 0;
  int batchRank = 0;
  int64_t batches = 1;
  int64_t batchExtents[kMaxStridedCopyRank] = {};
  int64_t batchSourceStrides[kMaxStridedCopyRank] = {};
  int64_t batchDestinationStrides[kMaxStridedCopyRank] = {};
  const unsigned char *source = nullptr;
  unsigned char *destination = nullptr;
};

enum class StridedCopyPath {
  Empty,
  Contiguous,
  Elementwise32,
  Elementwise64,
  Transpose
};

/// How one StridedCopy runs: the path, the element operation (a copy of
/// copyWordBytes-byte words, or a cast from `from` to `to`), whether every
/// element is aligned to its size, and the kernel argument of the path.
struct StridedCopyLaunch {
  StridedCopyPath path = StridedCopyPath::Empty;
  bool isCopy = true;
  unsigned copyWordBytes = 1;
  /// A cast moved as vectors of kCastLanes<from, to> elements.
  bool castInLanes = false;
  /// A transpose whose rows and columns are moved two at a time (rows,
  /// columns and every stride but the contiguous ones even; both tensors
  /// aligned to two elements).
  bool transposeInPairs = false;
  DType from = DType::F32, to = DType::F32;
  bool aligned = true;
  /// StridedCopy::castFailure where the cast is checked, else null.
  unsigned long long *castFailure = nullptr;
  /// Contiguous: the bytes to copy from source to destination.
  uint64_t contiguousBytes = 0;
  const void *source = nullptr;
  void *destination = nullptr;
  ElementwiseShape<uint32_t> elementwise32;
  ElementwiseShape<uint64_t> elementwise64;
  TransposeShape transpose;
};

/// Chooses how `copy` runs; fails as checkStridedCopy does.
Expected<StridedCopyLaunch> planStridedCopyLaunch(const StridedCopy &copy);

/// Calls `body(Op())` with the launch's element operation.
template <typename Body>
bool withLaunchElement(const StridedCopyLaunch &launch, Body &&body) {
  return withStridedCopyElement(launch.isCopy, launch.copyWordBytes,
                                launch.castInLanes, launch.from, launch.to,
                                static_cast<Body &&>(body));
}

/// The element offsets (in elements) of row-major iteration index `index`.
template <typename Index>
AOA_HOST_DEVICE inline void elementOffsets(const ElementwiseShape<Index> &shape,
                                           Index index, int64_t &source,
                                           int64_t &destination) {
  int64_t s = 0, d = 0;
  for (int k = shape.rank - 1; k > 0; --k) {
    Index outer = shape.extents[k].quotient(index);
    int64_t coordinate = int64_t(index - outer * shape.extents[k].divisor);
    s += coordinate * shape.sourceStrides[k];
    d += coordinate * shape.destinationStrides[k];
    index = outer;
  }
  source = s + int64_t(index) * shape.sourceStrides[0];
  destination = d + int64_t(index) * shape.destinationStrides[0];
}

/// One thread's share of one pass of the elementwise kernel: the elements
/// first, first + step, ... (kElementsPerThread of them, those below the
/// count). All are loaded before any is stored.
template <typename Op, bool Aligned, typename Index>
AOA_HOST_DEVICE inline void
copyElementGroup(const ElementwiseShape<Index> &shape, Index first,
                 Index step) {
  using Src = typename Op::Src;
  using Dst = typename Op::Dst;
  Src values[kElementsPerThread] = {};
  int64_t destinations[kElementsPerThread] = {};
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (unsigned j = 0; j < kElementsPerThread; ++j) {
    Index index = first + Index(j) * step;
    if (index < shape.count) {
      int64_t source = 0;
      elementOffsets(shape, index, source, destinations[j]);
      values[j] = loadStridedElement<Src, Aligned>(
          shape.source + source * int64_t(sizeof(Src)));
    }
  }
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (unsigned j = 0; j < kElementsPerThread; ++j) {
    if (first + Index(j) * step < shape.count) {
      bool ok = true;
      storeStridedElement<Dst, Aligned>(
          shape.destination + destinations[j] * int64_t(sizeof(Dst)),
          convertElement<Op>(values[j], ok));
      if constexpr (Op::kChecked) {
        if (!ok)
          recordCastFailure(shape.castFailure,
                            (unsigned long long)destinations[j]);
      }
    }
  }
}

/// Where a transpose tile starts: its first row and column, and the offsets
/// (in elements) of its first element.
struct TileOrigin {
  int64_t row = 0;
  int64_t column = 0;
  int64_t source = 0;
  int64_t destination = 0;
};

/// The origin of tile (batch, rowTile, columnTile).
AOA_HOST_DEVICE inline TileOrigin tileOrigin(const TransposeShape &shape,
                                             int64_t batch, int64_t rowTile,
                                             int64_t columnTile) {
  TileOrigin origin;
  for (int k = shape.batchRank - 1; k >= 0; --k) {
    int64_t coordinate = k == 0 ? batch : batch % shape.batchExtents[k];
    batch = k == 0 ? 0 : batch / shape.batchExtents[k];
    origin.source += coordinate * shape.batchSourceStrides[k];
    origin.destination += coordinate * shape.batchDestinationStrides[k];
  }
  origin.row = rowTile * int64_t(kTransposeTile);
  origin.column = columnTile * int64_t(kTransposeTile);
  origin.source += origin.row * shape.rowSourceStride +
                   origin.column * shape.columnSourceStride;
  origin.destination += origin.row * shape.rowDestinationStride +
                        origin.column * shape.columnDestinationStride;
  return origin;
}

/// A tile as it sits in shared memory: tile[column][row], converted. Rows
/// are padded to an odd number of 4-byte words (one element for 4- and
/// 8-byte types, more for narrower ones), so that a warp reading down a
/// column of the tile meets no bank conflicts.
template <typename Dst>
constexpr unsigned kTransposeTilePadding = sizeof(Dst) >= 4
                                               ? 1
                                               : unsigned(4 / sizeof(Dst));
template <typename Dst>
using TransposeTile = Dst[kTransposeTile + kTransposeTilePadding<Dst>];

/// Phase 1 of a tile, for thread (x, y): consecutive x read consecutive
/// rows (contiguous in the source), all of the thread's elements loaded
/// before any is converted into the tile. Element by element, the thread's
/// rows are x and x + kTransposeBlockWidth; in pairs (`Pairs`: rows and
/// strides even, both tensors aligned to pairs, see
/// StridedCopyLaunch::transposeInPairs), rows 2x and 2x + 1 come as one
/// load, so a warp reads twice the bytes per instruction. The columns are
/// y, y + kTransposeBlockRows, ...
template <typename Op, bool Aligned, bool Pairs = false>
AOA_HOST_DEVICE inline void
loadTransposeTile(const TransposeShape &shape, const TileOrigin &origin,
                  unsigned x, unsigned y,
                  TransposeTile<typename Op::Dst> *tile) {
  using Src = typename Op::Src;
  static_assert(kTransposeLanes == 2, "a pair is one thread's rows");
  using Loaded = std::conditional_t<Pairs, LaneVector<Src, 2>, Src>;
  constexpr unsigned kLoads = Pairs ? 1 : kTransposeLanes;
  auto rowOf = [x](unsigned lane) {
    return Pairs ? 2 * x + lane : x + lane * kTransposeBlockWidth;
  };
  auto inside = [&](unsigned r, unsigned c) {
    return origin.row + r < shape.rows && origin.column + c < shape.columns;
  };
  Loaded values[kTransposeSteps][kLoads] = {};
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (unsigned step = 0; step < kTransposeSteps; ++step) {
    unsigned c = y + step * kTransposeBlockRows;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (unsigned load = 0; load < kLoads; ++load) {
      unsigned r = rowOf(load);
      if (inside(r, c))
        values[step][load] = loadStridedElement<Loaded, Aligned>(
            shape.source + (origin.source + int64_t(r) * shape.rowSourceStride +
                            int64_t(c) * shape.columnSourceStride) *
                               int64_t(sizeof(Src)));
    }
  }
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (unsigned step = 0; step < kTransposeSteps; ++step) {
    unsigned c = y + step * kTransposeBlockRows;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (unsigned lane = 0; lane < kTransposeLanes; ++lane) {
      unsigned r = rowOf(lane);
      if (inside(r, c)) {
        if constexpr (Pairs)
          tile[c][r] = Op::convert(values[step][0].lane[lane]);
        else
          tile[c][r] = Op::convert(values[step][lane]);
      }
    }
  }
}

/// Phase 2 of a tile, for thread (x, y): consecutive x write consecutive
/// columns (contiguous in the destination): columns x and
/// x + kTransposeBlockWidth, or in pairs 2x and 2x + 1 as one store, of rows
/// y, y + kTransposeBlockRows, ...
template <typename Op, bool Aligned, bool Pairs = false>
AOA_HOST_DEVICE inline void
storeTransposeTile(const TransposeShape &shape, const TileOrigin &origin,
                   unsigned x, unsigned y,
                   const TransposeTile<typename Op::Dst> *tile) {
  using Dst = typename Op::Dst;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (unsigned step = 0; step < kTransposeSteps; ++step) {
    unsigned r = y + step * kTransposeBlockRows;
    if constexpr (Pairs) {
      unsigned c = 2 * x;
      if (origin.row + r < shape.rows && origin.column + c < shape.columns)
        storeStridedElement<LaneVector<Dst, 2>, Aligned>(
            shape.destination + (origin.destination +
                                 int64_t(c) * shape.columnDestinationStride +
                                 int64_t(r) * shape.rowDestinationStride) *
                                    int64_t(sizeof(Dst)),
            LaneVector<Dst, 2>{{tile[c][r], tile[c + 1][r]}});
    } else {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
      for (unsigned lane = 0; lane < kTransposeLanes; ++lane) {
        unsigned c = x + lane * kTransposeBlockWidth;
        if (origin.row + r < shape.rows && origin.column + c < shape.columns)
          storeStridedElement<Dst, Aligned>(
              shape.destination + (origin.destination +
                                   int64_t(c) * shape.columnDestinationStride +
                                   int64_t(r) * shape.rowDestinationStride) *
                                      int64_t(sizeof(Dst)),
              tile[c][r]);
      }
    }
  }
}

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_STRIDEDCOPYLAUNCH_H
