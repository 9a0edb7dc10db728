//===- InlineIntervalsTest.cpp - A box's intervals, inline or on the heap -===//
//
// Every way to make, copy and move the storage between every pair of sizes
// on both sides of the inline limit (0 to 6 intervals), each compared with a
// std::vector holding the same intervals; run under AddressSanitizer in CI,
// which also catches a heap buffer leaked, freed twice or read after a move.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/Box.h"
#include "aoa/ir/InlineIntervals.h"

#include <gtest/gtest.h>

#include <type_traits>
#include <utility>
#include <vector>

using namespace aoa;

namespace {

std::vector<Interval> intervals(size_t count, int64_t seed) {
  std::vector<Interval> out;
  for (size_t i = 0; i < count; ++i)
    out.push_back(Interval{seed + int64_t(i), seed + 10 * int64_t(i) + 7});
  return out;
}

void expectHolds(const InlineIntervals &storage,
                 const std::vector<Interval> &expected, const char *how) {
  ASSERT_EQ(storage.size(), expected.size()) << how;
  EXPECT_EQ(storage.empty(), expected.empty()) << how;
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(storage[i], expected[i]) << how << ", interval " << i;
  EXPECT_EQ(llvm::ArrayRef<Interval>(storage), llvm::ArrayRef<Interval>(expected))
      << how;
}

constexpr size_t kMaxCount = 6; // twice the inline limit

TEST(InlineIntervalsTest, IsSmallerThanASmallVectorOfThree) {
  EXPECT_LT(sizeof(InlineIntervals), sizeof(llvm::SmallVector<Interval, 3>));
  EXPECT_EQ(sizeof(Box), sizeof(InlineIntervals));
  EXPECT_TRUE(std::is_nothrow_move_constructible_v<Box>);
  EXPECT_TRUE(std::is_nothrow_move_assignable_v<Box>);
}

TEST(InlineIntervalsTest, MadeFromIntervalsOrACount) {
  for (size_t count = 0; count <= kMaxCount; ++count) {
    std::vector<Interval> expected = intervals(count, 100);
    expectHolds(InlineIntervals(expected), expected, "from intervals");
    expectHolds(InlineIntervals(count), std::vector<Interval>(count),
                "from a count");
    InlineIntervals filled(count);
    for (size_t i = 0; i < count; ++i)
      filled[i] = expected[i];
    expectHolds(filled, expected, "filled in place");
  }
}

TEST(InlineIntervalsTest, CopiesAndMovesBetweenEverySize) {
  for (size_t from = 0; from <= kMaxCount; ++from)
    for (size_t to = 0; to <= kMaxCount; ++to) {
      SCOPED_TRACE(std::to_string(from) + " -> " + std::to_string(to));
      std::vector<Interval> source = intervals(from, 1);
      std::vector<Interval> target = intervals(to, 1000);

      InlineIntervals original(source);
      InlineIntervals copied(original);
      expectHolds(copied, source, "copy-constructed");
      expectHolds(original, source, "copied from");

      InlineIntervals assigned(target);
      assigned = original;
      expectHolds(assigned, source, "copy-assigned");
      expectHolds(original, source, "copy-assigned from");

      InlineIntervals moved(std::move(copied));
      expectHolds(moved, source, "move-constructed");
      EXPECT_EQ(copied.size(), 0u); // NOLINT: moved-from is empty

      InlineIntervals moveAssigned(target);
      moveAssigned = std::move(moved);
      expectHolds(moveAssigned, source, "move-assigned");
      EXPECT_EQ(moved.size(), 0u); // NOLINT: moved-from is empty

      // A moved-from object can be given new intervals.
      moved = InlineIntervals(target);
      expectHolds(moved, target, "reused after a move");

      InlineIntervals &self = assigned;
      assigned = self;
      expectHolds(assigned, source, "assigned to itself");
    }
}

TEST(InlineIntervalsTest, BoxesOfEveryRankKeepTheirIntervals) {
  for (size_t rank = 0; rank <= kMaxCount; ++rank) {
    std::vector<Interval> dims = intervals(rank, 3);
    Box box(dims);
    Box copy = box;
    Box moved = std::move(copy);
    EXPECT_EQ(moved, box);
    EXPECT_EQ(moved.rank(), rank);
    std::vector<int64_t> offset, shape;
    for (const Interval &d : dims) {
      offset.push_back(d.begin);
      shape.push_back(d.size());
    }
    EXPECT_EQ(Box(offset, shape), box) << box.toString();
    std::vector<Box> grown;
    for (int i = 0; i < 100; ++i) // reallocations move the boxes
      grown.push_back(box);
    for (const Box &b : grown)
      EXPECT_EQ(b, box);
  }
}

} // namespace
