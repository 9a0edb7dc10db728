//===- ViewTest.cpp - Piece geometry against an element model --------------===//
//
// sourceRegionOf and restrictPiece are checked element by element: every
// point of a view region is traced back to its source point by undoing the
// transforms one at a time (no composed permutations, no box arithmetic), and
// the source box the library answers must hold exactly those points, in the
// order the postprocess list rearranges them.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/View.h"

#include "BruteForce.h"

#include "RandomGeometry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace aoa {
namespace {

using test::forEachPoint;
using test::Point;

/// A random box inside `shape` (never empty).
Box randomBoxIn(const std::vector<int64_t> &shape, std::mt19937 &rng) {
  llvm::SmallVector<Interval, 4> dims;
  for (int64_t n : shape) {
    int64_t a = std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
    int64_t b = std::uniform_int_distribution<int64_t>(a + 1, n)(rng);
    dims.push_back({a, b});
  }
  return Box(dims);
}


/// The point of the input that view point `v` shows, after the permutations
/// `steps` were applied in order: each step maps new[i] = old[P[i]], so
/// old[P[i]] = new[i], undone from the last step to the first.
Point tracePermutations(Point v, const std::vector<Permutation> &steps) {
  for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
    Point old(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      old[(*step)[i]] = v[i];
    v = old;
  }
  return v;
}

/// Applies the postprocess permutations to a region's relative coordinates:
/// where in the transformed region source point `s` (relative to the source
/// box) lands.
Point landInTransformed(Point s, const std::vector<Permutation> &steps) {
  for (const Permutation &p : steps) {
    Point next(s.size());
    for (size_t i = 0; i < s.size(); ++i)
      next[i] = s[p[i]];
    s = next;
  }
  return s;
}

TEST(View, PermutationChainsMapEveryElementBack) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    size_t rank = std::uniform_int_distribution<size_t>(1, 4)(rng);
    std::vector<int64_t> shape;
    for (size_t i = 0; i < rank; ++i)
      shape.push_back(std::uniform_int_distribution<int64_t>(1, 5)(rng));
    // The piece is a random region of the input placed at the view origin.
    Box source = randomBoxIn(shape, rng);
    Piece piece{Box::fromShape(source.shape()), 0, source,
                Transform::identity(rank)};
    std::vector<Permutation> steps;
    int count = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int k = 0; k < count; ++k) {
      Permutation p = test::randomPermutation(rng, rank);
      steps.push_back(p);
      piece.view = p.apply(piece.view);
      piece.transform = piece.transform->withPermutation(p);
    }
    ASSERT_EQ(piece.transform->postprocess.size(), steps.size());
    Box region = randomBoxIn(piece.view.shape(), rng);
    std::string why;
    std::optional<Box> answer = sourceRegionOf(piece, region, why);
    ASSERT_TRUE(answer) << why;
    ASSERT_EQ(answer->volume(), region.volume());
    forEachPoint(region, [&](const Point &v) {
      Point relative = tracePermutations(v, steps);
      Point expected(rank);
      for (size_t i = 0; i < rank; ++i)
        expected[i] = source.dim(i).begin + relative[i];
      ASSERT_TRUE(answer->containsPoint(expected));
      // The postprocess list, applied to the answered box, puts that source
      // element at v's position inside the region.
      Point inBox(rank), inRegion(rank);
      for (size_t i = 0; i < rank; ++i) {
        inBox[i] = expected[i] - answer->dim(i).begin;
        inRegion[i] = v[i] - region.dim(i).begin;
      }
      ASSERT_EQ(landInTransformed(inBox, steps), inRegion);
    });
  }
}

TEST(View, RestrictPieceKeepsTheTransformAndNarrowsTheSource) {
  Piece piece{Box({Interval{0, 4}, Interval{0, 6}}), 3,
              Box({Interval{2, 8}, Interval{10, 14}}),
              Transform::identity(2)->withPermutation(Permutation::reversed(2))};
  std::string why;
  std::optional<Piece> part =
      restrictPiece(piece, Box({Interval{1, 3}, Interval{4, 9}}), why);
  ASSERT_TRUE(part) << why;
  EXPECT_EQ(part->view, Box({Interval{1, 3}, Interval{4, 6}}));
  // View rows are source columns, view columns source rows.
  EXPECT_EQ(part->source, Box({Interval{6, 8}, Interval{11, 13}}));
  EXPECT_EQ(part->input, 3u);
  EXPECT_EQ(part->transform, piece.transform);
  EXPECT_FALSE(restrictPiece(piece, Box({Interval{5, 6}, Interval{0, 1}}), why));
  EXPECT_NE(why.find("does not overlap"), std::string::npos);
}

TEST(View, ReshapeMapsWholeBlocksAndRejectsCuts) {
  // Input (8, 3) holding a canonical (4, 2, 3); the piece is input rows 2..7
  // (blocks 1..3) seen as canonical blocks 0..2 of the view.
  ReshapeMarker marker{false, {4, 2, 3}};
  Piece piece{Box({Interval{0, 3}, Interval{0, 2}, Interval{0, 3}}), 0,
              Box({Interval{2, 8}, Interval{0, 3}}),
              Transform::identity(2)->withReshape(marker)};
  EXPECT_EQ(piece.transform->postprocess,
            std::vector<std::string>{"reshape:[4, 2, 3]"});
  std::string why;
  std::optional<Box> rows = sourceRegionOf(
      piece, Box({Interval{1, 3}, Interval{0, 2}, Interval{0, 3}}), why);
  ASSERT_TRUE(rows) << why;
  EXPECT_EQ(*rows, Box({Interval{4, 8}, Interval{0, 3}}));
  EXPECT_FALSE(sourceRegionOf(
      piece, Box({Interval{1, 3}, Interval{0, 1}, Interval{0, 3}}), why));
  EXPECT_NE(why.find("canonical dimension 1"), std::string::npos);

  // Flatten: a canonical (4, 2, 3) input seen as (8, 3); view rows 2..5 are
  // blocks 1..2.
  ReshapeMarker flatten{true, {4, 2, 3}};
  Piece flat{Box({Interval{0, 8}, Interval{0, 3}}), 0,
             Box({Interval{0, 4}, Interval{0, 2}, Interval{0, 3}}),
             Transform::identity(3)->withReshape(flatten)};
  std::optional<Box> blocks =
      sourceRegionOf(flat, Box({Interval{2, 6}, Interval{0, 3}}), why);
  ASSERT_TRUE(blocks) << why;
  EXPECT_EQ(*blocks, Box({Interval{1, 3}, Interval{0, 2}, Interval{0, 3}}));
  EXPECT_FALSE(sourceRegionOf(flat, Box({Interval{1, 4}, Interval{0, 3}}), why));
  EXPECT_NE(why.find("whole 2-row blocks"), std::string::npos);
}

TEST(View, ReshapeAfterAPermutationUndoesItFirst) {
  // Input (3, 8) transposed to (8, 3), then unflattened to (4, 2, 3).
  Permutation transpose = Permutation::reversed(2);
  Piece piece{Box({Interval{0, 4}, Interval{0, 2}, Interval{0, 3}}), 0,
              Box({Interval{0, 3}, Interval{0, 8}}),
              Transform::identity(2)
                  ->withPermutation(transpose)
                  ->withReshape(ReshapeMarker{false, {4, 2, 3}})};
  std::string why;
  std::optional<Box> answer = sourceRegionOf(
      piece, Box({Interval{3, 4}, Interval{0, 2}, Interval{0, 3}}), why);
  ASSERT_TRUE(answer) << why;
  // Block 3 is flattened rows 6..7, i.e. input columns 6..7.
  EXPECT_EQ(*answer, Box({Interval{0, 3}, Interval{6, 8}}));
}

TEST(View, PieceIndexFindsExactlyTheOverlappingPieces) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    // A random grid tiling of a 2-D or 3-D view.
    size_t rank = std::uniform_int_distribution<size_t>(1, 3)(rng);
    std::vector<std::vector<int64_t>> cuts(rank);
    std::vector<int64_t> shape;
    for (size_t d = 0; d < rank; ++d) {
      int64_t n = std::uniform_int_distribution<int64_t>(1, 12)(rng);
      shape.push_back(n);
      cuts[d].push_back(0);
      for (int64_t x = 1; x < n; ++x)
        if (rng() % 3 == 0)
          cuts[d].push_back(x);
      cuts[d].push_back(n);
    }
    View view;
    view.type.shape = shape;
    std::vector<size_t> at(rank, 0);
    while (true) {
      llvm::SmallVector<Interval, 4> dims;
      for (size_t d = 0; d < rank; ++d)
        dims.push_back({cuts[d][at[d]], cuts[d][at[d] + 1]});
      view.pieces.push_back(Piece{Box(dims), 0, Box(dims), nullptr});
      size_t d = rank;
      while (d > 0 && ++at[d - 1] + 1 == cuts[d - 1].size())
        at[--d] = 0;
      if (d == 0)
        break;
    }
    std::shuffle(view.pieces.begin(), view.pieces.end(), rng);
    PieceIndex index(view);
    for (int q = 0; q < 10; ++q) {
      Box query = randomBoxIn(shape, rng);
      std::vector<uint32_t> expected;
      for (uint32_t i = 0; i < view.pieces.size(); ++i)
        if (intersect(view.pieces[i].view, query))
          expected.push_back(i);
      ASSERT_EQ(index.overlapping(query), expected) << query.toString();
    }
  }
}

} // namespace
} // namespace aoa
