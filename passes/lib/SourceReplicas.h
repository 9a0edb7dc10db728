//===- SourceReplicas.h - A source key's copies, by element ----*- C++ -*-===//
//
// A checkpoint may store an element of a key more than once. Those copies are
// replicas when their shards have the same box (global_offset and
// local_shape), whatever their flat ranges: one replica may be stored whole
// and another as the flat pieces of sharding stage 1, or two replicas may
// split the box at different points. Shards with different boxes must store
// disjoint elements: an overlap there is a malformed layout (a wrong
// global_offset), and accepting it would need an n-D overlay of boxes.
//
// Inside one box every stored copy is a range of the box's row-major order (a
// whole shard is [0, volume)), so cutting the box at every range end gives
// segments that each copy holds entirely or not at all. Every stored element
// then lies in one segment, with the list of the replicas that hold it, and
// resolution chooses among them per segment: a 1-D problem per box, solved
// by a sort and one sweep over the range ends.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_LIB_SOURCEREPLICAS_H
#define AOA_PASSES_LIB_SOURCEREPLICAS_H

#include "aoa/ir/Box.h"
#include "aoa/ir/FlatRange.h"
#include "aoa/ir/ShardMetadata.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace aoa {

/// A run of a box's row-major order that every one of `replicas` stores
/// whole. (Kept small: a DeepSeek-sized conversion caches a million.)
struct ReplicaSegment {
  llvm::SmallVector<ShardId, 2> replicas; ///< ascending: metadata order
  /// The run as boxes (flatRangeToBoxes: at most 2*rank-1, in flat order),
  /// each with the flat index of its first element in the group's box;
  /// empty when the run is the whole box.
  llvm::SmallVector<FlatPiece, 0> pieces;
  /// Some rank stores two of the replicas (in two files, or twice in one):
  /// resolution then reads the segment on that rank from one of them.
  bool rankHoldsTwo = false;
};

/// The shards of a source key that share one box, cut into segments.
struct ReplicaGroup {
  Box box;
  /// Ascending, disjoint, each with at least one replica; elements of the
  /// box that no shard stores are in none.
  llvm::SmallVector<ReplicaSegment, 1> segments;

  /// The segments that can hold elements of `part`: those whose run meets
  /// the flat indices from part's first element in `box` to its last, in
  /// order (a binary search: a key stored in thousands of flat ranges has
  /// as many segments, and every region bound visited them all).
  llvm::ArrayRef<ReplicaSegment> segmentsMeeting(const Box &part) const;

  /// Calls visit(box, flatBegin) for every box of `segment`, in flat order;
  /// flatBegin is the flat index of the box's first element in `box`.
  template <typename Visit>
  void forEachPiece(const ReplicaSegment &segment, Visit visit) const {
    if (segment.pieces.empty()) {
      visit(box, int64_t(0));
      return;
    }
    for (const FlatPiece &piece : segment.pieces)
      visit(piece.box, piece.flatBegin);
  }
};

/// The key's shards grouped by box, groups in the order of their first shard
/// in the metadata. Cost: O(s log s) for s shards, plus the size of the
/// replica lists (one entry per segment a shard holds).
std::vector<ReplicaGroup> groupSourceReplicas(TensorRef tensor);

} // namespace aoa

#endif // AOA_PASSES_LIB_SOURCEREPLICAS_H
