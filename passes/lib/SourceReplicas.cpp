//===- SourceReplicas.cpp - A source key's copies, by element -------------===//
#include "SourceReplicas.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <map>

namespace aoa {

namespace {

/// The elements of its box a shard stores, as a flat range.
struct StoredRange {
  int64_t begin, end;
  ShardId shard;
  uint32_t rank;
};

StoredRange storedRange(ShardRef shard, int64_t volume) {
  std::optional<FlatElementRange> flat = shard.flatRange();
  if (!flat)
    return {0, volume, shard.id(), shard.rank()};
  // The loader rejects ranges outside the box; clamp like FlatRange.h.
  int64_t begin = std::clamp<int64_t>(flat->begin, 0, volume);
  return {begin, std::clamp<int64_t>(flat->end, begin, volume), shard.id(),
          shard.rank()};
}

/// By box, then by id.
bool boxLess(ShardRef a, ShardRef b) {
  llvm::ArrayRef<int64_t> ao = a.globalOffset(), bo = b.globalOffset();
  if (ao != bo)
    return std::lexicographical_compare(ao.begin(), ao.end(), bo.begin(),
                                        bo.end());
  llvm::ArrayRef<int64_t> as = a.localShape(), bs = b.localShape();
  if (as != bs)
    return std::lexicographical_compare(as.begin(), as.end(), bs.begin(),
                                        bs.end());
  return a.id() < b.id();
}

bool sameBox(ShardRef a, ShardRef b) {
  return a.globalOffset() == b.globalOffset() &&
         a.localShape() == b.localShape();
}

/// A segment stored by `covering`.
template <typename Ranges>
ReplicaSegment segmentOf(const Ranges &covering, std::vector<uint32_t> &ranks) {
  ReplicaSegment segment;
  ranks.clear();
  for (const StoredRange &r : covering) {
    segment.replicas.push_back(r.shard);
    ranks.push_back(r.rank);
  }
  std::sort(ranks.begin(), ranks.end());
  segment.rankHoldsTwo =
      std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end();
  return segment;
}

/// Cuts the group's box at every end of `ranges` (the group's shards, ascending
/// by id) and lists, for every segment, the shards that store it: a sweep
/// over the ends that keeps the ranges covering the current point.
void cutSegments(ReplicaGroup &group, const std::vector<StoredRange> &ranges,
                 std::vector<uint32_t> &ranks) {
  const int64_t volume = group.box.volume();
  if (std::all_of(ranges.begin(), ranges.end(), [&](const StoredRange &r) {
        return r.begin == 0 && r.end == volume;
      })) {
    // The common case: one segment, every shard a replica of all of it.
    if (volume > 0)
      group.segments.push_back(segmentOf(ranges, ranks));
    return;
  }
  std::vector<int64_t> points;
  points.reserve(2 * ranges.size());
  for (const StoredRange &r : ranges) {
    points.push_back(r.begin);
    points.push_back(r.end);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::vector<const StoredRange *> byBegin, byEnd;
  for (const StoredRange &r : ranges) {
    byBegin.push_back(&r);
    byEnd.push_back(&r);
  }
  std::sort(byBegin.begin(), byBegin.end(),
            [](const StoredRange *a, const StoredRange *b) {
              return a->begin < b->begin;
            });
  std::sort(byEnd.begin(), byEnd.end(),
            [](const StoredRange *a, const StoredRange *b) {
              return a->end < b->end;
            });
  // No range begins or ends strictly inside a segment, so the ranges that
  // cover its first element cover all of it. Keyed by shard: metadata order.
  std::map<ShardId, StoredRange> covering;
  std::vector<StoredRange> listed;
  size_t nextBegin = 0, nextEnd = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const int64_t at = points[i];
    for (; nextBegin < byBegin.size() && byBegin[nextBegin]->begin <= at;
         ++nextBegin)
      covering.emplace(byBegin[nextBegin]->shard, *byBegin[nextBegin]);
    for (; nextEnd < byEnd.size() && byEnd[nextEnd]->end <= at; ++nextEnd)
      covering.erase(byEnd[nextEnd]->shard);
    if (covering.empty())
      continue; // stored nowhere: a hole, reported where a target needs it
    listed.clear();
    for (const auto &entry : covering)
      listed.push_back(entry.second);
    ReplicaSegment segment = segmentOf(listed, ranks);
    for (FlatPiece &piece : flatRangeToBoxes(group.box, at, points[i + 1])) {
      piece.flatBegin += at;
      segment.pieces.push_back(std::move(piece));
    }
    group.segments.push_back(std::move(segment));
  }
}

} // namespace

llvm::ArrayRef<ReplicaSegment>
ReplicaGroup::segmentsMeeting(const Box &part) const {
  llvm::ArrayRef<ReplicaSegment> all = segments;
  // One segment (maybe the whole box, without pieces) needs no search; a
  // group cut into several gives each its pieces (cutSegments).
  if (all.size() <= 1 || part.rank() != box.rank())
    return all;
  int64_t first = 0, last = 0, stride = 1;
  for (size_t i = box.rank(); i-- > 0;) {
    const Interval &g = box.dim(i), &p = part.dim(i);
    int64_t low = std::max(p.begin, g.begin) - g.begin;
    int64_t high = std::min(p.end, g.end) - g.begin - 1;
    if (high < low)
      return {}; // `part` holds none of the box
    first += low * stride;
    last += high * stride;
    stride *= g.size();
  }
  auto runEnd = [](const ReplicaSegment &s) {
    return s.pieces.back().flatBegin + s.pieces.back().box.volume();
  };
  const ReplicaSegment *from =
      std::partition_point(all.begin(), all.end(), [&](const ReplicaSegment &s) {
        return runEnd(s) <= first;
      });
  const ReplicaSegment *to =
      std::partition_point(from, all.end(), [&](const ReplicaSegment &s) {
        return s.pieces.front().flatBegin <= last;
      });
  return all.slice(from - all.begin(), to - from);
}

std::vector<ReplicaGroup> groupSourceReplicas(TensorRef tensor) {
  std::vector<ShardRef> shards(tensor.shards().begin(), tensor.shards().end());
  // Each group's shards ascend by id: metadata order.
  std::sort(shards.begin(), shards.end(), boxLess);
  std::vector<std::pair<size_t, size_t>> runs; // [first, last) of a box
  for (size_t i = 0; i < shards.size();) {
    size_t j = i + 1;
    while (j < shards.size() && sameBox(shards[i], shards[j]))
      ++j;
    runs.emplace_back(i, j);
    i = j;
  }
  // Groups in the order of their first shard in the metadata.
  if (runs.size() > 1)
    std::sort(runs.begin(), runs.end(),
              [&](const std::pair<size_t, size_t> &a,
                  const std::pair<size_t, size_t> &b) {
                return shards[a.first].id() < shards[b.first].id();
              });
  std::vector<ReplicaGroup> groups;
  groups.reserve(runs.size());
  std::vector<StoredRange> ranges;
  std::vector<uint32_t> ranks;
  for (auto [first, last] : runs) {
    ReplicaGroup group;
    group.box = Box(shards[first].globalOffset(), shards[first].localShape());
    const int64_t volume = group.box.volume();
    ranges.clear();
    for (size_t i = first; i < last; ++i)
      ranges.push_back(storedRange(shards[i], volume));
    cutSegments(group, ranges, ranks);
    if (!group.segments.empty())
      groups.push_back(std::move(group));
  }
  return groups;
}

} // namespace aoa
