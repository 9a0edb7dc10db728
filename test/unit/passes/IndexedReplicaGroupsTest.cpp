//===- IndexedReplicaGroupsTest.cpp ---------------------------------------===//
//
// IndexedReplicaGroups::candidates against a scan of every group: every group
// whose box shares an element with the query is a candidate, in ascending
// order, for row tilings of uneven heights, grids, keys of few groups and
// scalars; and a key of many rows yields few candidates per row.
//
//===----------------------------------------------------------------------===//
#include "IndexedReplicaGroups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace aoa {
namespace {

ReplicaGroup groupOf(const Box &box) {
  ReplicaGroup group;
  group.box = box;
  group.segments.emplace_back();
  group.segments.back().replicas.push_back(0);
  return group;
}

bool overlaps(const Box &a, const Box &b) {
  return intersect(a, b).has_value();
}

/// Checks candidates(query) against a scan of `groups`.
void expectCandidatesCover(const std::vector<ReplicaGroup> &groups,
                           const Box &query) {
  IndexedReplicaGroups index(groups);
  llvm::SmallVector<uint32_t, 8> found = index.candidates(query);
  EXPECT_TRUE(std::is_sorted(found.begin(), found.end())) << query.toString();
  EXPECT_EQ(std::adjacent_find(found.begin(), found.end()), found.end());
  for (uint32_t g = 0; g < groups.size(); ++g) {
    if (!overlaps(groups[g].box, query))
      continue;
    EXPECT_TRUE(std::binary_search(found.begin(), found.end(), g))
        << "group " << g << " " << groups[g].box.toString() << " overlaps "
        << query.toString() << " but is no candidate";
  }
}

/// Rows [0, rows) cut into blocks of 1 to maxHeight rows, in shuffled order
/// (a key's groups come in metadata order, not by position).
std::vector<ReplicaGroup> rowBlocks(std::mt19937 &random, int64_t rows,
                                    int64_t maxHeight, int64_t columns) {
  std::vector<ReplicaGroup> groups;
  for (int64_t begin = 0; begin < rows;) {
    int64_t height = std::min<int64_t>(
        rows - begin, std::uniform_int_distribution<int64_t>(1, maxHeight)(random));
    groups.push_back(groupOf(Box({Interval{begin, begin + height},
                                  Interval{0, columns}})));
    begin += height;
  }
  std::shuffle(groups.begin(), groups.end(), random);
  return groups;
}

Box randomQuery(std::mt19937 &random, int64_t rows, int64_t columns) {
  auto interval = [&](int64_t extent) {
    int64_t a = std::uniform_int_distribution<int64_t>(0, extent - 1)(random);
    int64_t b = std::uniform_int_distribution<int64_t>(a + 1, extent)(random);
    return Interval{a, b};
  };
  return Box({interval(rows), interval(columns)});
}

TEST(IndexedReplicaGroupsTest, RowBlocksOfUnevenHeightsMatchAScan) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<ReplicaGroup> groups = rowBlocks(random, 500, 9, 6);
    for (int q = 0; q < 50; ++q)
      expectCandidatesCover(groups, randomQuery(random, 500, 6));
  }
}

TEST(IndexedReplicaGroupsTest, GridsMatchAScan) {
  std::mt19937 random(11);
  std::vector<ReplicaGroup> groups;
  for (int64_t r = 0; r < 40; r += 4)
    for (int64_t c = 0; c < 30; c += 3)
      groups.push_back(groupOf(Box({Interval{r, r + 4}, Interval{c, c + 3}})));
  std::shuffle(groups.begin(), groups.end(), random);
  for (int q = 0; q < 300; ++q)
    expectCandidatesCover(groups, randomQuery(random, 40, 30));
}

TEST(IndexedReplicaGroupsTest, FewGroupsAndScalarsAreAllCandidates) {
  std::vector<ReplicaGroup> few;
  for (int64_t r = 0; r < 4; ++r)
    few.push_back(groupOf(Box(llvm::ArrayRef<Interval>{Interval{r, r + 1}})));
  IndexedReplicaGroups index(few);
  EXPECT_EQ(
      index.candidates(Box(llvm::ArrayRef<Interval>{Interval{0, 1}})).size(),
      4u);
  IndexedReplicaGroups scalar({groupOf(Box())});
  EXPECT_EQ(scalar.candidates(Box()).size(), 1u);
}

TEST(IndexedReplicaGroupsTest, ARowOfAManyRowKeyHasFewCandidates) {
  std::mt19937 random(3);
  std::vector<ReplicaGroup> groups = rowBlocks(random, 20000, 2, 4);
  IndexedReplicaGroups index(groups);
  for (int64_t row : {0, 777, 19999}) {
    Box query({Interval{row, row + 1}, Interval{0, 4}});
    llvm::SmallVector<uint32_t, 8> found = index.candidates(query);
    EXPECT_LE(found.size(), 2u) << query.toString();
    expectCandidatesCover(groups, query);
  }
}

} // namespace
} // namespace aoa
