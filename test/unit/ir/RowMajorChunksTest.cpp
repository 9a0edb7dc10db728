//===- RowMajorChunksTest.cpp - A box in bounded row-major slabs ----------===//
#include "aoa/ir/RowMajorChunks.h"

#include "BruteForce.h"

#include <gtest/gtest.h>

#include <random>

using namespace aoa;

namespace {

using test::Point;

std::vector<Box> chunksOf(const Box &box, int64_t maxElements) {
  std::vector<Box> chunks;
  forEachRowMajorChunk(box, maxElements, [&](const Box &chunk) {
    chunks.push_back(chunk);
    return true;
  });
  return chunks;
}

std::vector<std::string> texts(const std::vector<Box> &boxes) {
  std::vector<std::string> out;
  for (const Box &box : boxes)
    out.push_back(box.toString());
  return out;
}

Box box(const std::vector<Interval> &dims) {
  return Box(llvm::ArrayRef<Interval>(dims));
}

TEST(RowMajorChunks, HandWritten) {
  Box matrix = box({{2, 6}, {0, 6}});
  EXPECT_EQ(texts(chunksOf(matrix, 100)),
            (std::vector<std::string>{"[2:6, 0:6]"}));
  EXPECT_EQ(texts(chunksOf(matrix, 13)),
            (std::vector<std::string>{"[2:4, 0:6]", "[4:6, 0:6]"}));
  EXPECT_EQ(texts(chunksOf(matrix, 18)),
            (std::vector<std::string>{"[2:5, 0:6]", "[5:6, 0:6]"}));
  EXPECT_EQ(texts(chunksOf(box({{0, 2}, {0, 5}}), 3)),
            (std::vector<std::string>{"[0:1, 0:3]", "[0:1, 3:5]", "[1:2, 0:3]",
                                      "[1:2, 3:5]"}));
  EXPECT_EQ(texts(chunksOf(box({{0, 2}, {0, 2}, {0, 3}}), 6)),
            (std::vector<std::string>{"[0:1, 0:2, 0:3]", "[1:2, 0:2, 0:3]"}));
  // A bound below one element still makes progress.
  EXPECT_EQ(chunksOf(box({{0, 3}}), 0).size(), 3u);
  EXPECT_EQ(texts(chunksOf(Box(), 1)), (std::vector<std::string>{"[]"}));
  EXPECT_TRUE(chunksOf(box({{0, 3}, {1, 1}}), 10).empty());
}

TEST(RowMajorChunks, StopsWhenTheVisitorSaysSo) {
  int visits = 0;
  forEachRowMajorChunk(box({{0, 10}}), 1,
                       [&](const Box &) { return ++visits < 4; });
  EXPECT_EQ(visits, 4);
}

// The chunks' points, one after another, are the box's points in row-major
// order; every chunk is non-empty and within the bound.
TEST(RowMajorChunksProperty, CoverTheBoxInOrder) {
  std::mt19937_64 rng(0xC4A2C5);
  for (int iteration = 0; iteration < 1000; ++iteration) {
    size_t rank = rng() % 5;
    std::vector<Interval> dims;
    for (size_t d = 0; d < rank; ++d) {
      int64_t begin = int64_t(rng() % 7) - 3;
      dims.push_back(Interval{begin, begin + int64_t(rng() % 5)});
    }
    Box whole = box(dims);
    int64_t bound = int64_t(rng() % 40);
    std::vector<Point> expected, actual;
    test::forEachPoint(whole, [&](const Point &p) { expected.push_back(p); });
    for (const Box &chunk : chunksOf(whole, bound)) {
      EXPECT_FALSE(chunk.isEmpty());
      EXPECT_LE(chunk.volume(), std::max<int64_t>(bound, 1));
      EXPECT_TRUE(whole.contains(chunk));
      test::forEachPoint(chunk, [&](const Point &p) { actual.push_back(p); });
    }
    ASSERT_EQ(actual, expected) << whole.toString() << " bound " << bound;
  }
}

} // namespace
