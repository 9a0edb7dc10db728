//===- StoredRegionTest.cpp - Runs of a key region in a stored tensor -----===//
//
// forEachStoredRun against an element-by-element model: every point of the
// region, in row-major order, must land at its own row-major position in
// the stored box (minus the flat range's start), and the runs must be
// maximal. Boxes and flat ranges, hand-written and random; errors.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/StoredRegion.h"

#include "BruteForce.h"

#include <gtest/gtest.h>

#include <random>
#include <utility>

using namespace aoa;
using namespace aoa::runtime;

namespace {

using test::Point;

/// (stored offset, region offset) of every element, as the model says: the
/// point's position in the stored box's flattening, computed by hand.
std::vector<std::pair<int64_t, int64_t>>
modelElements(const Box &stored, int64_t base, const Box &region) {
  std::vector<std::pair<int64_t, int64_t>> elements;
  int64_t regionOffset = 0;
  test::forEachPoint(region, [&](const Point &p) {
    int64_t index = 0;
    for (size_t d = 0; d < stored.rank(); ++d)
      index = index * stored.dim(d).size() + (p[d] - stored.dim(d).begin);
    elements.emplace_back(index - base, regionOffset++);
  });
  return elements;
}

struct Walk {
  Status status;
  std::vector<StoredRun> runs;
};

Walk walk(const Box &stored, std::optional<FlatElementRange> flat,
          const Box &region) {
  Walk result;
  result.status =
      forEachStoredRun(stored, flat, region, [&](const StoredRun &run) {
        result.runs.push_back(run);
        return true;
      });
  return result;
}

std::vector<std::pair<int64_t, int64_t>>
expand(const std::vector<StoredRun> &runs) {
  std::vector<std::pair<int64_t, int64_t>> elements;
  for (const StoredRun &run : runs)
    for (int64_t k = 0; k < run.count; ++k)
      elements.emplace_back(run.storedOffset + k, run.regionOffset + k);
  return elements;
}

Box box(const std::vector<Interval> &dims) {
  return Box(llvm::ArrayRef<Interval>(dims));
}

TEST(StoredRegion, RowsOfAColumnStrip) {
  // Columns 2..5 of rows 1..3 of a 4x6 box at offset (10, 0).
  Box stored = box({{10, 14}, {0, 6}});
  Walk w = walk(stored, std::nullopt, box({{11, 14}, {2, 5}}));
  ASSERT_TRUE(w.status.ok()) << w.status.error().toString();
  ASSERT_EQ(w.runs.size(), 3u);
  EXPECT_EQ(w.runs[0].storedOffset, 8);
  EXPECT_EQ(w.runs[1].storedOffset, 14);
  EXPECT_EQ(w.runs[2].storedOffset, 20);
  EXPECT_EQ(w.runs[2].regionOffset, 6);
  EXPECT_EQ(w.runs[2].count, 3);
  EXPECT_EQ(storedRunCount(stored, box({{11, 14}, {2, 5}})), 3);
}

TEST(StoredRegion, FullRowsAreOneRun) {
  Box stored = box({{0, 4}, {0, 6}});
  Walk w = walk(stored, std::nullopt, box({{1, 3}, {0, 6}}));
  ASSERT_TRUE(w.status.ok());
  ASSERT_EQ(w.runs.size(), 1u);
  EXPECT_EQ(w.runs[0].storedOffset, 6);
  EXPECT_EQ(w.runs[0].count, 12);
}

TEST(StoredRegion, FlatRangeOffsetsCountFromItsStart) {
  // Elements [5, 20) of a 4x6 box; rows 1..2 are elements 6..17.
  Walk w = walk(box({{0, 4}, {0, 6}}), FlatElementRange{5, 20},
                box({{1, 3}, {0, 6}}));
  ASSERT_TRUE(w.status.ok());
  ASSERT_EQ(w.runs.size(), 1u);
  EXPECT_EQ(w.runs[0].storedOffset, 1);
  EXPECT_EQ(w.runs[0].count, 12);
}

TEST(StoredRegion, ScalarsAndEmptyRegions) {
  Walk scalar = walk(Box(), std::nullopt, Box());
  ASSERT_TRUE(scalar.status.ok());
  ASSERT_EQ(scalar.runs.size(), 1u);
  EXPECT_EQ(scalar.runs[0].count, 1);
  Walk empty = walk(box({{0, 4}}), std::nullopt, box({{2, 2}}));
  EXPECT_TRUE(empty.status.ok());
  EXPECT_TRUE(empty.runs.empty());
  EXPECT_EQ(storedRunCount(box({{0, 4}}), box({{2, 2}})), 0);
}

TEST(StoredRegion, StopsWhenTheVisitorSaysSo) {
  int visits = 0;
  Status status = forEachStoredRun(
      box({{0, 4}, {0, 6}}), std::nullopt, box({{0, 4}, {1, 2}}),
      [&](const StoredRun &) { return ++visits < 2; });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(visits, 2);
}

TEST(StoredRegion, ErrorsVisitNothing) {
  Walk outside =
      walk(box({{0, 4}, {0, 6}}), std::nullopt, box({{2, 5}, {0, 6}}));
  ASSERT_FALSE(outside.status.ok());
  EXPECT_EQ(outside.status.error().message,
            "region [2:5, 0:6] is not inside the stored box [0:4, 0:6]");
  EXPECT_TRUE(outside.runs.empty());

  Walk rank = walk(box({{0, 4}, {0, 6}}), std::nullopt, box({{0, 4}}));
  EXPECT_FALSE(rank.status.ok());
  EXPECT_TRUE(rank.runs.empty());

  // Row 3 is elements 18..23, but the range stops before 20.
  Walk flat = walk(box({{0, 4}, {0, 6}}), FlatElementRange{5, 20},
                   box({{1, 4}, {0, 3}}));
  ASSERT_FALSE(flat.status.ok());
  EXPECT_EQ(flat.status.error().message,
            "region [1:4, 0:3] reaches elements [6, 21) of the stored box "
            "[0:4, 0:6], outside its flat range [5, 20)");
  EXPECT_TRUE(flat.runs.empty());
  Walk fits = walk(box({{0, 4}, {0, 6}}), FlatElementRange{5, 20},
                   box({{1, 4}, {0, 2}}));
  EXPECT_TRUE(fits.status.ok()) << "elements 6, 7, 12, 13, 18, 19";
  EXPECT_TRUE(flat.runs.empty());
  Walk first = walk(box({{0, 4}, {0, 6}}), FlatElementRange{5, 20},
                    box({{0, 1}, {5, 6}}));
  EXPECT_TRUE(first.status.ok()) << "element 5 is the range's first";
  Walk early = walk(box({{0, 4}, {0, 6}}), FlatElementRange{5, 20},
                    box({{0, 1}, {3, 6}}));
  EXPECT_FALSE(early.status.ok());
  EXPECT_TRUE(early.runs.empty());
}

/// A random box with the given rank and extents 1..4 (sometimes 0).
Box randomBox(std::mt19937_64 &rng, size_t rank) {
  std::vector<Interval> dims;
  for (size_t d = 0; d < rank; ++d) {
    int64_t begin = int64_t(rng() % 5) - 2;
    int64_t size = int64_t(rng() % 6);
    if (size == 0 && rng() % 3 != 0)
      size = 1;
    dims.push_back(Interval{begin, begin + size});
  }
  return box(dims);
}

/// A random sub-box of `outer`.
Box randomSubBox(std::mt19937_64 &rng, const Box &outer) {
  std::vector<Interval> dims;
  for (const Interval &d : outer.dims()) {
    // Mostly non-empty and narrower than the box, so that runs break.
    std::uniform_int_distribution<int64_t> coord(d.begin, d.end);
    int64_t x = coord(rng), y = coord(rng);
    if (x == y && rng() % 8 != 0)
      x = std::max(d.begin, y - 1);
    dims.push_back(Interval{std::min(x, y), std::max(x, y)});
  }
  return box(dims);
}

TEST(StoredRegionProperty, MatchesTheElementModel) {
  std::mt19937_64 rng(0x5701ED);
  int flatAccepted = 0, flatRejected = 0, multiRun = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    size_t rank = rng() % 5;
    Box stored = randomBox(rng, rank);
    Box region = randomSubBox(rng, stored);
    std::optional<FlatElementRange> flat;
    int64_t volume = stored.volume();
    if (rng() % 2 == 0 && volume > 0) {
      int64_t a = int64_t(rng() % uint64_t(volume + 1));
      int64_t b = int64_t(rng() % uint64_t(volume + 1));
      flat = FlatElementRange{std::min(a, b), std::max(a, b)};
    }
    int64_t base = flat ? flat->begin : 0;
    std::vector<std::pair<int64_t, int64_t>> expected =
        modelElements(stored, base, region);
    bool inside = true;
    for (const auto &[storedOffset, regionOffset] : expected)
      inside &=
          storedOffset >= 0 && storedOffset < (flat ? flat->size() : volume);

    Walk w = walk(stored, flat, region);
    SCOPED_TRACE(stored.toString() + " " + region.toString() +
                 (flat ? " flat [" + std::to_string(flat->begin) + ", " +
                             std::to_string(flat->end) + ")"
                       : ""));
    ASSERT_EQ(w.status.ok(), inside);
    if (!inside) {
      EXPECT_TRUE(w.runs.empty());
      ++flatRejected;
      continue;
    }
    flatAccepted += flat.has_value();
    ASSERT_EQ(expand(w.runs), expected);
    // Maximal: no two consecutive runs could have been one.
    for (size_t i = 1; i < w.runs.size(); ++i) {
      const StoredRun &p = w.runs[i - 1], &q = w.runs[i];
      EXPECT_FALSE(p.storedOffset + p.count == q.storedOffset &&
                   p.regionOffset + p.count == q.regionOffset);
    }
    for (const StoredRun &run : w.runs)
      EXPECT_GT(run.count, 0);
    EXPECT_EQ(int64_t(w.runs.size()), storedRunCount(stored, region));
    multiRun += w.runs.size() > 1;
  }
  EXPECT_GT(flatAccepted, 300);
  EXPECT_GT(flatRejected, 300);
  EXPECT_GT(multiRun, 150);
}

} // namespace
