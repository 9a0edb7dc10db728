//===- IndexedReplicaGroups.cpp -------------------------------------------===//
#include "IndexedReplicaGroups.h"

#include "aoa/ir/BoxOverlap.h"

#include <algorithm>

namespace aoa {

namespace {

/// Keys of at most this many groups are scanned: an index costs more.
constexpr size_t kScannedGroups = 16;

} // namespace

IndexedReplicaGroups::IndexedReplicaGroups(std::vector<ReplicaGroup> groups)
    : groups_(std::move(groups)) {
  if (groups_.size() <= kScannedGroups || groups_.front().box.rank() == 0)
    return;
  byBegin_.reserve(groups_.size());
  for (uint32_t g = 0; g < groups_.size(); ++g) {
    const Interval &axis = groups_[g].box.dim(0);
    byBegin_.emplace_back(axis.begin, g);
    longest_ = std::max(longest_, axis.size());
  }
  std::sort(byBegin_.begin(), byBegin_.end());
}

llvm::SmallVector<uint32_t, 8>
IndexedReplicaGroups::candidates(const Box &box) const {
  llvm::SmallVector<uint32_t, 8> found;
  if (byBegin_.empty() || box.rank() == 0) {
    for (uint32_t g = 0; g < groups_.size(); ++g)
      found.push_back(g);
    return found;
  }
  // A group [s, s + n) with n <= longest_ overlaps [b, e) only if
  // b - longest_ < s < e (saturated: boxes come from checked metadata).
  const Interval &axis = box.dim(0);
  int64_t after = axis.begin > INT64_MIN + longest_ ? axis.begin - longest_
                                                    : INT64_MIN;
  auto first = std::upper_bound(
      byBegin_.begin(), byBegin_.end(), std::make_pair(after, UINT32_MAX));
  auto last = std::lower_bound(first, byBegin_.end(),
                               std::make_pair(axis.end, uint32_t(0)));
  for (auto at = first; at != last; ++at)
    found.push_back(at->second);
  std::sort(found.begin(), found.end());
  return found;
}

void storedBoxes(const std::vector<ReplicaGroup> &groups,
                 std::vector<const Box *> &boxes,
                 std::vector<const ReplicaSegment *> &owners) {
  boxes.clear();
  owners.clear();
  for (const ReplicaGroup &group : groups)
    for (const ReplicaSegment &segment : group.segments)
      group.forEachPiece(segment, [&](const Box &box, int64_t) {
        boxes.push_back(&box);
        owners.push_back(&segment);
      });
}

CheckedReplicaGroups CheckedReplicaGroups::of(TensorRef tensor) {
  CheckedReplicaGroups checked;
  checked.indexed = IndexedReplicaGroups(groupSourceReplicas(tensor));
  // The segments of one group are disjoint; groups must be too.
  std::vector<const Box *> boxes;
  std::vector<const ReplicaSegment *> owners;
  storedBoxes(checked.indexed.groups(), boxes, owners);
  checked.overlapping = findOverlappingPair(boxes).has_value();
  return checked;
}

} // namespace aoa
