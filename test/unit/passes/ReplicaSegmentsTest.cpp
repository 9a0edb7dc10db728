//===- ReplicaSegmentsTest.cpp --------------------------------------------===//
//
// ReplicaGroup::segmentsMeeting against a scan of every segment: for a box
// cut into flat runs (as groupSourceReplicas cuts a key stored in flat
// ranges), every segment that holds an element of a query box lies in the
// slice it returns, and a row of a key cut into thousands of runs meets few.
//
//===----------------------------------------------------------------------===//
#include "SourceReplicas.h"

#include <gtest/gtest.h>

#include <random>

namespace aoa {
namespace {

/// `box` cut at `cuts` (ascending flat indices inside it), one segment per
/// run, with its pieces as cutSegments makes them.
ReplicaGroup cutInRuns(const Box &box, const std::vector<int64_t> &cuts) {
  ReplicaGroup group;
  group.box = box;
  std::vector<int64_t> points = {0};
  points.insert(points.end(), cuts.begin(), cuts.end());
  points.push_back(box.volume());
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    ReplicaSegment segment;
    segment.replicas.push_back(ShardId(i));
    for (FlatPiece &piece : flatRangeToBoxes(box, points[i], points[i + 1])) {
      piece.flatBegin += points[i];
      segment.pieces.push_back(std::move(piece));
    }
    group.segments.push_back(std::move(segment));
  }
  return group;
}

bool holdsSome(const ReplicaGroup &group, const ReplicaSegment &segment,
               const Box &part) {
  bool some = false;
  group.forEachPiece(segment, [&](const Box &box, int64_t) {
    some |= intersect(box, part).has_value();
  });
  return some;
}

void expectSliceHoldsEverySegmentThatMeets(const ReplicaGroup &group,
                                           const Box &part) {
  llvm::ArrayRef<ReplicaSegment> slice = group.segmentsMeeting(part);
  for (const ReplicaSegment &segment : group.segments) {
    bool inSlice = !slice.empty() && &segment >= slice.begin() &&
                   &segment < slice.end();
    if (!holdsSome(group, segment, part))
      continue;
    EXPECT_TRUE(inSlice) << "segment " << segment.replicas[0] << " holds some of "
                         << part.toString() << " but is outside the slice";
  }
}

TEST(ReplicaSegmentsTest, RandomRunsOfABoxMatchAScan) {
  std::mt19937 random(5);
  const Box box({Interval{2, 9}, Interval{0, 5}, Interval{1, 4}});
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<int64_t> cuts;
    for (int64_t at = 1; at < box.volume(); ++at)
      if (std::uniform_int_distribution<int>(0, 5)(random) == 0)
        cuts.push_back(at);
    ReplicaGroup group = cutInRuns(box, cuts);
    for (int q = 0; q < 40; ++q) {
      llvm::SmallVector<Interval, 3> dims;
      for (size_t i = 0; i < box.rank(); ++i) {
        // Queries may reach past the box, as regions of other groups do.
        int64_t a = std::uniform_int_distribution<int64_t>(
            box.dim(i).begin - 1, box.dim(i).end - 1)(random);
        int64_t b = std::uniform_int_distribution<int64_t>(
            a + 1, box.dim(i).end + 1)(random);
        dims.push_back(Interval{a, b});
      }
      expectSliceHoldsEverySegmentThatMeets(group, Box(dims));
    }
  }
}

TEST(ReplicaSegmentsTest, ARowOfManyRunsMeetsFew) {
  const Box box({Interval{0, 6000}, Interval{0, 4}});
  std::vector<int64_t> cuts;
  for (int64_t at = 8; at < box.volume(); at += 8)
    cuts.push_back(at); // two rows a run
  ReplicaGroup group = cutInRuns(box, cuts);
  ASSERT_EQ(group.segments.size(), 3000u);
  Box row({Interval{4321, 4322}, Interval{0, 4}});
  EXPECT_EQ(group.segmentsMeeting(row).size(), 1u);
  expectSliceHoldsEverySegmentThatMeets(group, row);
  EXPECT_TRUE(group.segmentsMeeting(Box({Interval{6000, 6001}, Interval{0, 4}}))
                  .empty());
}

} // namespace
} // namespace aoa
