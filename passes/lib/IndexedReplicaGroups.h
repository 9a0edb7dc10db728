//===- IndexedReplicaGroups.h - A source key's groups, found by box -*- C++ -*-===//
//
// resolve-shard-sources visits, for every source region it binds, the
// replica groups of the region's key that the region overlaps. A key split
// into thousands of shards (rows over every rank, or flat ranges of a
// ZeRO-style layout) has thousands of groups, and visiting all of them for
// every region made the pass quadratic in the shards of a key. This index
// keeps the groups in their order and finds the few a box can overlap by a
// binary search on their first axis.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_LIB_INDEXEDREPLICAGROUPS_H
#define AOA_PASSES_LIB_INDEXEDREPLICAGROUPS_H

#include "SourceReplicas.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace aoa {

class IndexedReplicaGroups {
public:
  IndexedReplicaGroups() = default;
  explicit IndexedReplicaGroups(std::vector<ReplicaGroup> groups);

  /// In groupSourceReplicas' order (the order bindings visit them).
  const std::vector<ReplicaGroup> &groups() const { return groups_; }

  /// The positions in groups(), ascending, of every group whose box can
  /// share an element with `box`: all that do, and maybe some that do not
  /// (callers test the overlap), without visiting the others.
  llvm::SmallVector<uint32_t, 8> candidates(const Box &box) const;

private:
  std::vector<ReplicaGroup> groups_;
  /// (begin on axis 0, position) of every group, sorted; empty for keys of
  /// few groups or of rank 0, whose groups are all candidates.
  std::vector<std::pair<int64_t, uint32_t>> byBegin_;
  /// The largest extent of a group on axis 0: a group that overlaps [b, e)
  /// there begins after b - longest_ and before e.
  int64_t longest_ = 0;
};

/// The boxes the segments of `groups` store, each group's segments in order
/// and each segment's boxes in order, with the segment of each.
void storedBoxes(const std::vector<ReplicaGroup> &groups,
                 std::vector<const Box *> &boxes,
                 std::vector<const ReplicaSegment *> &owners);

/// A source key's replica groups and whether shards of it overlap without
/// being replicas: what resolve-shard-sources works out once per key it
/// reads, on the answering thread when there is one (PieceAnswers.h), so
/// that the sequential binding does not.
struct CheckedReplicaGroups {
  IndexedReplicaGroups indexed;
  /// Two boxes of different groups share an element (findOverlappingPair
  /// over storedBoxes finds them again to report them). A flag, not the
  /// pair: a cache entry of a million-key source stays in the allocator's
  /// size class of the groups alone.
  bool overlapping = false;
  /// The reporting resolver's own flag, beside `overlapping` for the same
  /// reason: the overlap was reported.
  bool reported = false;

  static CheckedReplicaGroups of(TensorRef tensor);
};

} // namespace aoa

#endif // AOA_PASSES_LIB_INDEXEDREPLICAGROUPS_H
