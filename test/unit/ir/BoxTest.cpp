//===- BoxTest.cpp - Intervals, boxes and row-major indexing --------------===//
//
// Hand-written cases plus randomized properties checked against a brute-force
// model that enumerates every point of a small universe.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/Box.h"

#include "BruteForce.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

using namespace aoa;

namespace {

using test::Point;
using test::forEachPoint;

bool inBox(const Box &box, const Point &p) {
  for (size_t i = 0; i < box.rank(); ++i)
    if (p[i] < box.dim(i).begin || p[i] >= box.dim(i).end)
      return false;
  return true;
}

Box randomBox(std::mt19937_64 &rng, size_t rank, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> coord(lo, hi);
  llvm::SmallVector<Interval, 4> dims;
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = coord(rng), y = coord(rng);
    // Mostly proper intervals, sometimes empty or inverted ones.
    if (x > y && rng() % 4 != 0)
      std::swap(x, y);
    dims.push_back(Interval{x, y});
  }
  return Box(dims);
}

TEST(Interval, SizeEmptyAndIntersection) {
  EXPECT_EQ((Interval{2, 5}.size()), 3);
  EXPECT_EQ((Interval{5, 2}.size()), 0);
  EXPECT_TRUE((Interval{3, 3}.isEmpty()));
  EXPECT_FALSE((Interval{3, 4}.isEmpty()));
  EXPECT_TRUE((Interval{3, 4}.contains(3)));
  EXPECT_FALSE((Interval{3, 4}.contains(4)));
  EXPECT_EQ(intersect(Interval{0, 4}, Interval{2, 9}), (Interval{2, 4}));
  EXPECT_EQ(intersect(Interval{0, 4}, Interval{4, 9}), std::nullopt);
}

TEST(Box, ConstructionAndAccessors) {
  Box box({2, 0}, {4, 6});
  EXPECT_EQ(box.rank(), 2u);
  EXPECT_EQ(box.dim(0), (Interval{2, 6}));
  EXPECT_EQ(box.dim(1), (Interval{0, 6}));
  EXPECT_EQ(box.volume(), 24);
  EXPECT_FALSE(box.isEmpty());
  EXPECT_EQ(box.offsets(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(box.shape(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(box.toString(), "[2:6, 0:6]");
  EXPECT_EQ(Box::fromShape({3, 1, 2}).toString(), "[0:3, 0:1, 0:2]");
  EXPECT_EQ(Box({Interval{0, 4}, Interval{2, 3}}).toString(), "[0:4, 2:3]");
}

TEST(Box, FromOffsetShapeValidates) {
  EXPECT_EQ(Box::fromOffsetShape({1}, {2, 3}), std::nullopt);
  EXPECT_EQ(Box::fromOffsetShape({1, 0}, {2, -1}), std::nullopt);
  std::optional<Box> ok = Box::fromOffsetShape({1, 0}, {2, 0});
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->isEmpty());
  EXPECT_EQ(ok->volume(), 0);
}

TEST(Box, RankZeroIsOneElement) {
  Box scalar;
  EXPECT_EQ(scalar.rank(), 0u);
  EXPECT_EQ(scalar.volume(), 1);
  EXPECT_FALSE(scalar.isEmpty());
  EXPECT_EQ(scalar.toString(), "[]");
  std::optional<Box> common = intersect(scalar, Box::fromShape({}));
  ASSERT_TRUE(common);
  EXPECT_EQ(*common, scalar);
  EXPECT_TRUE(scalar.contains(scalar));
  EXPECT_EQ(rowMajorIndex(scalar, {}), 0);
  EXPECT_EQ(rowMajorCoords(scalar, 0), std::vector<int64_t>{});
  EXPECT_EQ(rowMajorCoords(scalar, 1), std::nullopt);
}

TEST(Box, EmptyBoxes) {
  Box empty({0, 0}, {3, 0});
  EXPECT_TRUE(empty.isEmpty());
  EXPECT_EQ(empty.volume(), 0);
  Box inverted({Interval{0, 3}, Interval{5, 2}});
  EXPECT_TRUE(inverted.isEmpty());
  EXPECT_EQ(inverted.volume(), 0);
  EXPECT_EQ(intersect(empty, Box::fromShape({3, 3})), std::nullopt);
  // An empty box is contained in any box of its rank, never in another rank.
  EXPECT_TRUE(Box::fromShape({1, 1}).contains(inverted));
  EXPECT_FALSE(Box::fromShape({1}).contains(inverted));
}

TEST(Box, IntersectContainsAndRankMismatch) {
  Box a({0, 0}, {4, 6}), b({2, 4}, {5, 5});
  std::optional<Box> common = intersect(a, b);
  ASSERT_TRUE(common);
  EXPECT_EQ(common->toString(), "[2:4, 4:6]");
  EXPECT_EQ(intersect(a, Box({4, 0}, {1, 6})), std::nullopt); // touching only
  EXPECT_EQ(intersect(a, Box({0}, {4})), std::nullopt);       // rank mismatch
  EXPECT_TRUE(a.contains(*common));
  EXPECT_TRUE(a.contains(a));
  EXPECT_FALSE(a.contains(b));
  EXPECT_FALSE(a.contains(Box({0}, {4})));
  EXPECT_TRUE(a.containsPoint({3, 5}));
  EXPECT_FALSE(a.containsPoint({3, 6}));
  EXPECT_FALSE(a.containsPoint({3}));
}

TEST(Box, TranslateAndRelativeTo) {
  Box shard({256, 0}, {256, 512});
  Box region({300, 10}, {4, 2});
  EXPECT_EQ(region.relativeTo(shard), Box({44, 10}, {4, 2}));
  EXPECT_EQ(region.relativeTo(shard).translate(shard.offsets()), region);
  EXPECT_EQ(region.translate({-300, 5}).toString(), "[0:4, 15:17]");
}

TEST(Box, RowMajorIndexing) {
  Box frame({10, 20}, {4, 6});
  EXPECT_EQ(rowMajorStrides({4, 6, 5}), (std::vector<int64_t>{30, 5, 1}));
  EXPECT_EQ(rowMajorStrides({}), std::vector<int64_t>{});
  EXPECT_EQ(rowMajorIndex(frame, {10, 20}), 0);
  EXPECT_EQ(rowMajorIndex(frame, {11, 23}), 9);
  EXPECT_EQ(rowMajorIndex(frame, {13, 25}), 23);
  EXPECT_EQ(rowMajorIndex(frame, {14, 20}), std::nullopt);
  EXPECT_EQ(rowMajorIndex(frame, {10}), std::nullopt);
  EXPECT_EQ(rowMajorCoords(frame, 9), (std::vector<int64_t>{11, 23}));
  EXPECT_EQ(rowMajorCoords(frame, 24), std::nullopt);
  EXPECT_EQ(rowMajorCoords(frame, -1), std::nullopt);
}

// Intersection, containment and volume agree with point membership.
TEST(BoxProperty, IntersectAndContainsMatchPointModel) {
  std::mt19937_64 rng(0xB0C5);
  const int64_t lo = -3, hi = 5;
  int nonEmptyIntersections = 0, containments = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    const size_t rank = rng() % 5;
    Box a = randomBox(rng, rank, lo, hi), b = randomBox(rng, rank, lo, hi);
    // Sometimes make b a sub-box of a so containment is exercised.
    if (rng() % 3 == 0 && !a.isEmpty()) {
      llvm::SmallVector<Interval, 4> dims;
      for (const Interval &d : a.dims()) {
        std::uniform_int_distribution<int64_t> in(d.begin, d.end);
        int64_t x = in(rng), y = in(rng);
        dims.push_back(Interval{std::min(x, y), std::max(x, y)});
      }
      b = Box(dims);
    }
    llvm::SmallVector<Interval, 4> universeDims(rank, Interval{lo, hi + 1});
    Box universe(universeDims);

    int64_t countA = 0, countBoth = 0;
    bool bInsideA = true;
    std::optional<Box> common = intersect(a, b);
    forEachPoint(universe, [&](const Point &p) {
      const bool inA = inBox(a, p), inB = inBox(b, p);
      countA += inA;
      countBoth += inA && inB;
      if (inB && !inA)
        bInsideA = false;
      const bool inCommon = common && common->containsPoint(p);
      ASSERT_EQ(inCommon, inA && inB) << a.toString() << " " << b.toString();
      ASSERT_EQ(a.containsPoint(p), inA);
    });
    EXPECT_EQ(a.volume(), countA) << a.toString();
    EXPECT_EQ(a.isEmpty(), countA == 0) << a.toString();
    EXPECT_EQ(common.has_value(), countBoth > 0);
    if (common) {
      EXPECT_EQ(common->volume(), countBoth);
      EXPECT_EQ(intersect(b, a), common); // symmetric
      ++nonEmptyIntersections;
    }
    EXPECT_EQ(a.contains(b), bInsideA) << a.toString() << " " << b.toString();
    containments += bInsideA;
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(nonEmptyIntersections, 50);
  EXPECT_GT(containments, 50);
}

// subtract(a, b) holds exactly the points of a outside b, in at most 2*rank
// disjoint non-empty boxes.
TEST(BoxProperty, SubtractMatchesPointModel) {
  std::mt19937_64 rng(0x5B7AC7);
  const int64_t lo = -3, hi = 5;
  int partial = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    const size_t rank = rng() % 5;
    // Mostly non-empty boxes, so that partial overlaps are common.
    auto properBox = [&] {
      llvm::SmallVector<Interval, 4> dims;
      std::uniform_int_distribution<int64_t> coord(lo, hi);
      for (size_t i = 0; i < rank; ++i) {
        int64_t x = coord(rng), y = coord(rng);
        dims.push_back(Interval{std::min(x, y), std::max(x, y) + 1});
      }
      return Box(dims);
    };
    bool proper = rng() % 4 != 0;
    Box a = proper ? properBox() : randomBox(rng, rank, lo, hi);
    Box b = proper ? properBox() : randomBox(rng, rank, lo, hi);
    std::vector<Box> pieces = subtract(a, b);
    EXPECT_LE(pieces.size(), 2 * rank);
    llvm::SmallVector<Interval, 4> universeDims(rank, Interval{lo, hi + 1});
    forEachPoint(Box(universeDims), [&](const Point &p) {
      int holders = 0;
      for (const Box &piece : pieces)
        holders += inBox(piece, p);
      ASSERT_EQ(holders, inBox(a, p) && !inBox(b, p) ? 1 : 0)
          << a.toString() << " - " << b.toString();
    });
    for (const Box &piece : pieces)
      EXPECT_FALSE(piece.isEmpty()) << piece.toString();
    partial += pieces.size() > 1;
  }
  EXPECT_GT(partial, 40);
  // Different ranks share nothing; a scalar minus itself is nothing.
  Box row(llvm::ArrayRef<Interval>{Interval{0, 4}});
  EXPECT_EQ(subtract(row, Box()), std::vector<Box>{row});
  EXPECT_TRUE(subtract(Box(), Box()).empty());
}

// rowMajorIndex numbers the points of a box 0..volume-1 in odometer order, and
// rowMajorCoords inverts it; translation moves every point by the delta.
TEST(BoxProperty, RowMajorIndexMatchesOdometerOrder) {
  std::mt19937_64 rng(0x5EED);
  for (int iteration = 0; iteration < 300; ++iteration) {
    const size_t rank = rng() % 5;
    Box box = randomBox(rng, rank, -4, 4);
    int64_t expected = 0;
    Point delta(rank);
    for (int64_t &d : delta)
      d = static_cast<int64_t>(rng() % 7) - 3;
    Box moved = box.translate(delta);
    forEachPoint(box, [&](const Point &p) {
      ASSERT_EQ(rowMajorIndex(box, p), expected) << box.toString();
      ASSERT_EQ(rowMajorCoords(box, expected), p);
      Point q = p;
      for (size_t i = 0; i < rank; ++i)
        q[i] += delta[i];
      ASSERT_TRUE(moved.containsPoint(q));
      ++expected;
    });
    EXPECT_EQ(expected, box.volume());
    EXPECT_EQ(moved.volume(), box.volume());
    EXPECT_EQ(moved.relativeTo(box).offsets(), delta);
    EXPECT_EQ(rowMajorCoords(box, expected), std::nullopt);
  }
}

} // namespace
