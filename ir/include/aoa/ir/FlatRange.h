//===- FlatRange.h - Flat shard ranges as boxes and runs --------*- C++ -*-===//
//
// Paddle sharding stage-1 v2, FSDP flat parameters and ZeRO partitions store a
// shard as 1-D data: elements [a, b) of the row-major flattening of a box
// `outer` (the shard's global_offset and local_shape; metadata `flat_range`).
//
// The compiler only reasons about boxes, so flatRangeToBoxes turns such a range
// into at most 2*rank-1 maximal boxes. The runtime needs the other direction:
// flatRunsOfBox lists the contiguous runs of the stored data that fill a box.
//
// Flat indices are positions in the flattening of `outer` (0 is outer's first
// element); "storage offsets" are positions in the stored 1-D data (flat index
// minus a). Metadata loading must reject ranges other than
// 0 <= a <= b <= outer.volume(); here a range is clamped to [0, volume()] as a
// safeguard, and storage offsets count from the clamped a.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_FLATRANGE_H
#define AOA_IR_FLATRANGE_H

#include "aoa/ir/Box.h"

#include <cstdint>
#include <vector>

namespace aoa {

/// One box of a flat range, and where its first element is stored.
struct FlatPiece {
  Box box;           ///< in global coordinates, inside `outer`
  int64_t flatBegin; ///< storage offset of box's first element (index - a)
};

/// The elements [a, b) of the row-major flattening of `outer`, as the fewest
/// disjoint boxes (at most 2*rank-1; one for rank 0 and 1), in increasing flat
/// order: a partial first row, full middle blocks, a partial last row, each
/// recursively. Consecutive pieces are stored back to back, so piece k+1's
/// flatBegin is piece k's flatBegin plus its volume. Empty when the clamped
/// range is empty.
std::vector<FlatPiece> flatRangeToBoxes(const Box &outer, int64_t a, int64_t b);

/// A contiguous run of stored elements that lands contiguously in a region.
struct FlatRun {
  int64_t flatOffset;   ///< storage offset of the first element (index - a)
  int64_t length;       ///< number of elements
  int64_t regionOffset; ///< row-major position of the first element in region
};

/// The runs of the stored data [a, b) of `outer` that fill `region` (a box in
/// global coordinates), in the row-major order of `region`. Together they
/// cover exactly region ∩ outer ∩ elements[a, b); elements of region outside
/// `outer` or outside [a, b) are not stored and get no run. Runs are maximal:
/// two consecutive runs are never contiguous both in storage and in region.
/// Cost: O(rank * (runs + log(rows of region))), independent of the volume.
/// Empty when the ranks differ.
std::vector<FlatRun> flatRunsOfBox(const Box &outer, int64_t a, int64_t b,
                                   const Box &region);

} // namespace aoa

#endif // AOA_IR_FLATRANGE_H
