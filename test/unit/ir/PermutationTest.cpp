//===- PermutationTest.cpp - Axis permutations: parsing and algebra -------===//
//
// Hand-written cases for the reference's convention (new[i] = old[P[i]]) and
// the text form, plus randomized properties checked against a brute-force
// transpose of element coordinates.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/Permutation.h"

#include "BruteForce.h"

#include "RandomGeometry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

using namespace aoa;

namespace {

using test::Point;
using test::forEachPoint;

Permutation parseOk(std::string_view text, size_t rank) {
  std::string error;
  std::optional<Permutation> p = Permutation::parse(text, rank, &error);
  EXPECT_TRUE(p) << text << ": " << error;
  EXPECT_EQ(error, "") << text;
  return p ? *p : Permutation();
}

std::string parseError(std::string_view text, size_t rank) {
  std::string error;
  std::optional<Permutation> p = Permutation::parse(text, rank, &error);
  EXPECT_FALSE(p) << text << " parsed as " << (p ? p->toString() : "");
  EXPECT_NE(error, "") << text;
  return error;
}

std::vector<unsigned> axesOf(const Permutation &p) {
  return std::vector<unsigned>(p.axes().begin(), p.axes().end());
}


TEST(Permutation, IdentityAndReversed) {
  EXPECT_EQ(axesOf(Permutation::identity(3)), (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(axesOf(Permutation::reversed(3)), (std::vector<unsigned>{2, 1, 0}));
  EXPECT_TRUE(Permutation::identity(4).isIdentity());
  EXPECT_FALSE(Permutation::reversed(2).isIdentity());
  EXPECT_TRUE(Permutation::reversed(1).isIdentity());
  EXPECT_TRUE(Permutation().isIdentity());
  EXPECT_EQ(Permutation().rank(), 0u);
  EXPECT_EQ(Permutation::reversed(2).toString(), "[1, 0]");
  EXPECT_EQ(Permutation::identity(0).toString(), "[]");
}

TEST(Permutation, ParsesListsAndNormalizesNegativeAxes) {
  EXPECT_EQ(parseOk("[1, 0]", 2), Permutation::reversed(2));
  EXPECT_EQ(axesOf(parseOk("[2,0,1]", 3)), (std::vector<unsigned>{2, 0, 1}));
  EXPECT_EQ(parseOk("[]", 3), Permutation::reversed(3));
  EXPECT_EQ(parseOk(" [ ] ", 4), Permutation::reversed(4));
  EXPECT_EQ(parseOk("[]", 0), Permutation());
  EXPECT_EQ(axesOf(parseOk(" [ -1 , 0 ] ", 2)), (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(axesOf(parseOk("[0, -1, -2]", 3)),
            (std::vector<unsigned>{0, 2, 1}));
  EXPECT_EQ(axesOf(parseOk("[1, +0,]", 2)), (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(axesOf(parseOk("[0]", 1)), (std::vector<unsigned>{0}));
  // The canonical text does not depend on the spelling.
  EXPECT_EQ(parseOk("[1,0]", 2).toString(), "[1, 0]");
  EXPECT_EQ(parseOk("[-1,-3,-2]", 3).toString(), "[2, 0, 1]");
}

TEST(Permutation, RejectsMalformedText) {
  for (std::string_view text :
       {"", "1, 0", "[1 0]", "[a]", "[", "[1, 0", "1, 0]", "[1,,0]", "[,]",
        "[,0]", "[1, 0] x", "[1.0, 0]", "[-]", "(1, 0)", "[1, 0]]"}) {
    std::string error = parseError(text, 2);
    EXPECT_NE(error.find("invalid permutation '" + std::string(text) + "'"),
              std::string::npos)
        << error;
  }
}

TEST(Permutation, RejectsWrongLengthDuplicatesAndRange) {
  EXPECT_EQ(parseError("[0]", 2),
            "permutation '[0]' has 1 entry, but the tensor has rank 2");
  EXPECT_EQ(parseError("[0, 1, 2]", 2),
            "permutation '[0, 1, 2]' has 3 entries, but the tensor has rank 2");
  EXPECT_EQ(parseError("[0, 0]", 2), "permutation '[0, 0]' names axis 0 twice");
  EXPECT_EQ(parseError("[1, -1]", 2),
            "permutation '[1, -1]' names axis 1 twice");
  EXPECT_EQ(parseError("[0, 2]", 2),
            "permutation '[0, 2]' names axis 2, out of range for rank 2");
  EXPECT_EQ(parseError("[-3, 0]", 2),
            "permutation '[-3, 0]' names axis -3, out of range for rank 2");
  EXPECT_NE(parseError("[99999999999999999999999, 0]", 2).find("out of range"),
            std::string::npos);
  std::string error;
  EXPECT_FALSE(Permutation::fromAxes({1, 1, 0}, 3, &error));
  EXPECT_EQ(error, "permutation '[1, 1, 0]' names axis 1 twice");
  // A null error pointer is allowed.
  EXPECT_FALSE(Permutation::parse("[0, 0]", 2));
}

TEST(Permutation, ApplyFollowsTheReferenceConvention) {
  // new[i] = old[P[i]]: shape (2, 3, 4) under [2, 0, 1] becomes (4, 2, 3).
  Permutation p = parseOk("[2, 0, 1]", 3);
  EXPECT_EQ(p.apply(std::vector<int64_t>{2, 3, 4}),
            (std::vector<int64_t>{4, 2, 3}));
  Box box({0, 10, 20}, {2, 3, 4});
  EXPECT_EQ(p.apply(box).toString(), "[20:24, 0:2, 10:13]");
  EXPECT_EQ(axesOf(p.inverse()), (std::vector<unsigned>{1, 2, 0}));
  EXPECT_EQ(p.inverse().apply(p.apply(box)), box);
  // Rank mismatches are documented no-ops.
  EXPECT_EQ(p.apply(Box({0}, {5})), Box({0}, {5}));
  EXPECT_EQ(p.apply(std::vector<int64_t>{7, 8}), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(p.then(Permutation::reversed(2)), p);
}

TEST(Permutation, ThenAppliesLeftFirst) {
  Permutation first = parseOk("[1, 2, 0]", 3);
  Permutation second = parseOk("[0, 2, 1]", 3);
  std::vector<int64_t> shape{5, 6, 7};
  // first: (6, 7, 5); then second: (6, 5, 7).
  EXPECT_EQ(second.apply(first.apply(shape)), (std::vector<int64_t>{6, 5, 7}));
  EXPECT_EQ(first.then(second).apply(shape), (std::vector<int64_t>{6, 5, 7}));
  EXPECT_EQ(first.then(second).toString(), "[1, 0, 2]");
  EXPECT_EQ(second.then(first).toString(), "[2, 1, 0]");
  EXPECT_TRUE(first.then(first.inverse()).isIdentity());
}

// Round trips, composition and the brute-force transpose of every element:
// transposing a tensor X by P gives Y with Y[y] = X[x] where y[i] = x[P[i]].
TEST(PermutationProperty, MatchesBruteForceTranspose) {
  std::mt19937_64 rng(0x7E27);
  for (int iteration = 0; iteration < 300; ++iteration) {
    const size_t rank = rng() % 5;
    Permutation p = test::randomPermutation(rng, rank);
    Permutation q = test::randomPermutation(rng, rank);

    // Text round trip, including a spelling with negative axes.
    EXPECT_EQ(parseOk(p.toString(), rank),
              rank == 0 ? Permutation::reversed(0) : p);
    if (rank > 0) {
      std::string spelled = "[";
      for (size_t i = 0; i < rank; ++i) {
        int64_t axis = p[i];
        if (rng() % 2)
          axis -= static_cast<int64_t>(rank);
        spelled += (i ? "," : "") + std::to_string(axis);
      }
      spelled += "]";
      EXPECT_EQ(parseOk(spelled, rank), p) << spelled;
    }

    EXPECT_TRUE(p.then(p.inverse()).isIdentity());
    EXPECT_TRUE(p.inverse().then(p).isIdentity());
    EXPECT_EQ(p.inverse().inverse(), p);
    EXPECT_EQ(p.isIdentity(), p == Permutation::identity(rank));

    // A random source box of a small tensor.
    llvm::SmallVector<Interval, 4> dims;
    for (size_t i = 0; i < rank; ++i) {
      int64_t begin = static_cast<int64_t>(rng() % 4);
      dims.push_back(
          Interval{begin, begin + 1 + static_cast<int64_t>(rng() % 3)});
    }
    Box source(dims);
    Box target = p.apply(source);
    EXPECT_EQ(target.volume(), source.volume());
    EXPECT_EQ(p.inverse().apply(target), source);
    EXPECT_EQ(p.then(q).apply(source), q.apply(p.apply(source)));
    EXPECT_EQ(target.shape(), p.apply(source.shape()));

    int64_t visited = 0;
    forEachPoint(source, [&](const Point &x) {
      // y[i] = x[P[i]] (written out independently of apply()).
      Point y(rank);
      for (size_t i = 0; i < rank; ++i)
        y[i] = x[p.axes()[i]];
      ASSERT_TRUE(target.containsPoint(y)) << target.toString();
      ASSERT_EQ(p.apply(x), y);
      // The inverse scatters back: x[P[i]] = y[i].
      Point back(rank);
      for (size_t i = 0; i < rank; ++i)
        back[p.axes()[i]] = y[i];
      ASSERT_EQ(back, x);
      ASSERT_EQ(p.inverse().apply(y), x);
      ++visited;
    });
    EXPECT_EQ(visited, source.volume());
  }
}

} // namespace
