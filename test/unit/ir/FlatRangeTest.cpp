//===- FlatRangeTest.cpp - Flat shard ranges as boxes and runs ------------===//
//
// Hand-written cases plus randomized properties checked against a brute-force
// model that numbers every element of the outer box in row-major order.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/FlatRange.h"

#include "BruteForce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <random>

using namespace aoa;

namespace {

using test::Point;
using test::forEachPoint;

/// Flat index of every point of `outer`, by enumeration.
std::map<Point, int64_t> flatIndices(const Box &outer) {
  std::map<Point, int64_t> index;
  int64_t next = 0;
  forEachPoint(outer, [&](const Point &p) { index[p] = next++; });
  return index;
}

std::vector<std::string> boxTexts(const std::vector<FlatPiece> &pieces) {
  std::vector<std::string> texts;
  for (const FlatPiece &piece : pieces)
    texts.push_back(piece.box.toString());
  return texts;
}

std::vector<int64_t> flatBegins(const std::vector<FlatPiece> &pieces) {
  std::vector<int64_t> begins;
  for (const FlatPiece &piece : pieces)
    begins.push_back(piece.flatBegin);
  return begins;
}

/// (flatOffset, length, regionOffset) triples, for compact expectations.
std::vector<std::array<int64_t, 3>>
runTriples(const std::vector<FlatRun> &runs) {
  std::vector<std::array<int64_t, 3>> triples;
  for (const FlatRun &run : runs)
    triples.push_back({run.flatOffset, run.length, run.regionOffset});
  return triples;
}

using Triples = std::vector<std::array<int64_t, 3>>;

/// True when the union of two disjoint boxes is itself a box.
bool unionIsBox(const Box &a, const Box &b) {
  size_t differing = 0, where = 0;
  for (size_t i = 0; i < a.rank(); ++i)
    if (a.dim(i) != b.dim(i)) {
      ++differing;
      where = i;
    }
  if (differing != 1)
    return differing == 0;
  return a.dim(where).end == b.dim(where).begin ||
         b.dim(where).end == a.dim(where).begin;
}

TEST(FlatRangeToBoxes, MidRowToMidRow) {
  // Shape (4, 6), elements [3, 20): row 0 cols 3..6, rows 1..3, row 3 cols
  // 0..2.
  std::vector<FlatPiece> pieces =
      flatRangeToBoxes(Box::fromShape({4, 6}), 3, 20);
  EXPECT_EQ(boxTexts(pieces), (std::vector<std::string>{
                                  "[0:1, 3:6]", "[1:3, 0:6]", "[3:4, 0:2]"}));
  EXPECT_EQ(flatBegins(pieces), (std::vector<int64_t>{0, 3, 15}));
}

TEST(FlatRangeToBoxes, GlobalCoordinatesOfAnOffsetShard) {
  Box shard({8, 12}, {4, 6});
  std::vector<FlatPiece> pieces = flatRangeToBoxes(shard, 3, 20);
  EXPECT_EQ(boxTexts(pieces),
            (std::vector<std::string>{"[8:9, 15:18]", "[9:11, 12:18]",
                                      "[11:12, 12:14]"}));
}

TEST(FlatRangeToBoxes, ThreeDimensionsUseFiveBoxes) {
  // Shape (3, 4, 5), [7, 53): 7 = (0, 1, 2) and 53 = (2, 2, 3).
  std::vector<FlatPiece> pieces =
      flatRangeToBoxes(Box::fromShape({3, 4, 5}), 7, 53);
  EXPECT_EQ(boxTexts(pieces),
            (std::vector<std::string>{"[0:1, 1:2, 2:5]", "[0:1, 2:4, 0:5]",
                                      "[1:2, 0:4, 0:5]", "[2:3, 0:2, 0:5]",
                                      "[2:3, 2:3, 0:3]"}));
  EXPECT_EQ(flatBegins(pieces), (std::vector<int64_t>{0, 3, 13, 33, 43}));
}

TEST(FlatRangeToBoxes, WholeRowsAndSingleRows) {
  Box outer = Box::fromShape({4, 6});
  EXPECT_EQ(boxTexts(flatRangeToBoxes(outer, 0, 24)),
            (std::vector<std::string>{"[0:4, 0:6]"}));
  EXPECT_EQ(boxTexts(flatRangeToBoxes(outer, 6, 18)),
            (std::vector<std::string>{"[1:3, 0:6]"}));
  EXPECT_EQ(boxTexts(flatRangeToBoxes(outer, 7, 11)),
            (std::vector<std::string>{"[1:2, 1:5]"}));
  EXPECT_EQ(boxTexts(flatRangeToBoxes(outer, 5, 7)),
            (std::vector<std::string>{"[0:1, 5:6]", "[1:2, 0:1]"}));
}

TEST(FlatRangeToBoxes, EmptyClampedAndLowRanks) {
  Box outer = Box::fromShape({2, 3});
  EXPECT_TRUE(flatRangeToBoxes(outer, 4, 4).empty());
  EXPECT_TRUE(flatRangeToBoxes(outer, 5, 2).empty());
  EXPECT_TRUE(flatRangeToBoxes(outer, 6, 9).empty());
  EXPECT_TRUE(flatRangeToBoxes(Box::fromShape({3, 0}), 0, 1).empty());
  EXPECT_EQ(boxTexts(flatRangeToBoxes(outer, -5, 100)),
            (std::vector<std::string>{"[0:2, 0:3]"}));

  std::vector<FlatPiece> scalar = flatRangeToBoxes(Box(), 0, 1);
  ASSERT_EQ(scalar.size(), 1u);
  EXPECT_EQ(scalar[0].box, Box());
  EXPECT_EQ(scalar[0].flatBegin, 0);

  std::vector<FlatPiece> line = flatRangeToBoxes(Box({10}, {8}), 2, 7);
  EXPECT_EQ(boxTexts(line), (std::vector<std::string>{"[12:17]"}));
}

TEST(FlatRunsOfBox, HandWritten) {
  Box outer = Box::fromShape({4, 6});
  // Region rows 1..4, cols 1..3 of the stored range [3, 20).
  EXPECT_EQ(runTriples(flatRunsOfBox(outer, 3, 20, Box({1, 1}, {3, 2}))),
            (Triples{{4, 2, 0}, {10, 2, 2}, {16, 1, 4}}));
  // Whole rows of outer are one run.
  EXPECT_EQ(runTriples(flatRunsOfBox(outer, 3, 20, Box({1, 0}, {2, 6}))),
            (Triples{{3, 12, 0}}));
  // A region larger than outer: only the stored part, placed inside region.
  EXPECT_EQ(
      runTriples(flatRunsOfBox(Box({2, 0}, {2, 3}), 0, 6, Box({0, 0}, {5, 3}))),
      (Triples{{0, 6, 6}}));
  EXPECT_EQ(runTriples(
                flatRunsOfBox(Box({2, 0}, {2, 3}), 1, 5, Box({0, -1}, {5, 5}))),
            (Triples{{0, 2, 12}, {2, 2, 16}}));
  // Disjoint, empty, rank mismatch, rank 0.
  EXPECT_TRUE(flatRunsOfBox(outer, 0, 24, Box({4, 0}, {1, 6})).empty());
  EXPECT_TRUE(flatRunsOfBox(outer, 3, 3, outer).empty());
  EXPECT_TRUE(flatRunsOfBox(outer, 0, 24, Box({0}, {4})).empty());
  EXPECT_EQ(runTriples(flatRunsOfBox(Box(), 0, 1, Box())),
            (Triples{{0, 1, 0}}));
  EXPECT_TRUE(flatRunsOfBox(Box(), 1, 1, Box()).empty());
}

TEST(FlatRunsOfBox, CostFollowsRunsNotVolume) {
  // A column of a 2^40-element shard, stored range covering rows 5..8 and one
  // element of row 9: the answer must come without visiting the other rows.
  const int64_t rows = int64_t(1) << 20, cols = int64_t(1) << 20;
  Box outer = Box::fromShape({rows, cols});
  Box column({0, 7}, {rows, 1});
  const int64_t a = 5 * cols + 3, b = 9 * cols + 8;
  EXPECT_EQ(runTriples(flatRunsOfBox(outer, a, b, column)),
            (Triples{{4, 1, 5},
                     {cols + 4, 1, 6},
                     {2 * cols + 4, 1, 7},
                     {3 * cols + 4, 1, 8},
                     {4 * cols + 4, 1, 9}}));
  std::vector<FlatPiece> pieces = flatRangeToBoxes(outer, a, b);
  EXPECT_EQ(boxTexts(pieces),
            (std::vector<std::string>{"[5:6, 3:1048576]", "[6:9, 0:1048576]",
                                      "[9:10, 0:8]"}));
}

// flatRangeToBoxes is an exact, disjoint, ordered cover of the stored
// elements with at most 2*rank-1 maximal boxes, and flatRunsOfBox places every
// stored element of a region exactly once at its storage and region offsets.
TEST(FlatRangeProperty, MatchesElementByElementModel) {
  std::mt19937_64 rng(0xF1A7);
  int multiPieceCases = 0, multiRunCases = 0;
  for (int iteration = 0; iteration < 1000; ++iteration) {
    const size_t rank = rng() % 5;
    Point offset(rank), shape(rank);
    for (size_t i = 0; i < rank; ++i) {
      offset[i] = static_cast<int64_t>(rng() % 5) - 2;
      shape[i] = rng() % 12 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 5);
    }
    Box outer(offset, shape);
    const int64_t volume = outer.volume();
    std::uniform_int_distribution<int64_t> bound(-2, volume + 2);
    int64_t a = bound(rng), b = bound(rng);
    if (a > b && rng() % 4 != 0)
      std::swap(a, b);
    const int64_t lo = std::clamp<int64_t>(a, 0, volume);
    const int64_t hi = std::max(lo, std::clamp<int64_t>(b, 0, volume));
    std::map<Point, int64_t> flat = flatIndices(outer);
    ASSERT_EQ(static_cast<int64_t>(flat.size()), volume);

    // --- flatRangeToBoxes ---
    std::vector<FlatPiece> pieces = flatRangeToBoxes(outer, a, b);
    const size_t maxPieces = rank == 0 ? 1 : 2 * rank - 1;
    EXPECT_LE(pieces.size(), maxPieces)
        << outer.toString() << " " << a << " " << b;
    multiPieceCases += pieces.size() > 1;
    EXPECT_EQ(pieces.empty(), lo == hi);
    int64_t expectedBegin = 0;
    for (size_t k = 0; k < pieces.size(); ++k) {
      const FlatPiece &piece = pieces[k];
      ASSERT_FALSE(piece.box.isEmpty());
      ASSERT_TRUE(outer.contains(piece.box)) << piece.box.toString();
      EXPECT_EQ(piece.flatBegin, expectedBegin);
      // The piece's elements are consecutive in flat order, from flatBegin.
      int64_t next = lo + piece.flatBegin;
      forEachPoint(piece.box, [&](const Point &p) {
        ASSERT_EQ(flat.at(p), next++) << piece.box.toString();
      });
      expectedBegin += piece.box.volume();
      if (k > 0) {
        EXPECT_FALSE(unionIsBox(pieces[k - 1].box, piece.box))
            << pieces[k - 1].box.toString() << " " << piece.box.toString();
      }
    }
    EXPECT_EQ(expectedBegin, hi - lo);
    // Exact, disjoint cover: every stored element in exactly one piece.
    for (const auto &[point, index] : flat) {
      int covering = 0;
      for (const FlatPiece &piece : pieces)
        covering += piece.box.containsPoint(point);
      ASSERT_EQ(covering, (lo <= index && index < hi) ? 1 : 0);
    }

    // --- flatRunsOfBox: a region around, inside or across outer ---
    for (int regionTry = 0; regionTry < 3; ++regionTry) {
      Point regionOffset(rank), regionShape(rank);
      for (size_t i = 0; i < rank; ++i) {
        if (regionTry == 0 || rng() % 3 == 0) { // whole dimension of outer
          regionOffset[i] = offset[i];
          regionShape[i] = shape[i];
        } else {
          // Mostly overlapping outer, sometimes sticking out of it.
          regionOffset[i] =
              offset[i] - 1 + static_cast<int64_t>(rng() % (shape[i] + 2));
          regionShape[i] = 1 + static_cast<int64_t>(rng() % (shape[i] + 1));
        }
      }
      Box region(regionOffset, regionShape);
      // Brute force: region position -> storage offset of stored elements.
      std::map<int64_t, int64_t> expected;
      int64_t position = 0;
      forEachPoint(region, [&](const Point &p) {
        auto it = flat.find(p);
        if (it != flat.end() && lo <= it->second && it->second < hi)
          expected[position] = it->second - lo;
        ++position;
      });

      std::vector<FlatRun> runs = flatRunsOfBox(outer, a, b, region);
      multiRunCases += runs.size() > 1;
      std::map<int64_t, int64_t> actual;
      for (size_t k = 0; k < runs.size(); ++k) {
        const FlatRun &run = runs[k];
        ASSERT_GT(run.length, 0);
        for (int64_t e = 0; e < run.length; ++e)
          ASSERT_TRUE(
              actual.emplace(run.regionOffset + e, run.flatOffset + e).second)
              << "region offset placed twice";
        if (k > 0) {
          const FlatRun &prev = runs[k - 1];
          EXPECT_LT(prev.regionOffset + prev.length - 1, run.regionOffset)
              << "runs out of region order";
          EXPECT_FALSE(prev.flatOffset + prev.length == run.flatOffset &&
                       prev.regionOffset + prev.length == run.regionOffset)
              << "mergeable runs";
        }
      }
      EXPECT_EQ(actual, expected) << outer.toString() << " [" << a << ", " << b
                                  << ") region " << region.toString();
    }
  }
  // The generator must exercise split ranges and regions.
  EXPECT_GT(multiPieceCases, 150);
  EXPECT_GT(multiRunCases, 100);
}

} // namespace
