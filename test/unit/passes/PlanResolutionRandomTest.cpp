//===- PlanResolutionRandomTest.cpp - Random plans checked element by element ---===//
//
// Random cases of every kind (identity, rename, `^T`, permute, concat, split, cast,
// permute+cast, reshape, mixed) and fan-outs, compiled and executed on labels by
// PlanResolutionModel (support/), which checks every rule it lists.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionModel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace aoa;
using namespace aoa::plan_resolution_test;

namespace {

TEST(PlanResolution, RandomIdentity) { runRandom(Kind::Identity, 1, 150); }
TEST(PlanResolution, RandomRename) { runRandom(Kind::Rename, 2, 60); }
TEST(PlanResolution, RandomTranspose) { runRandom(Kind::Transpose, 3, 60); }
TEST(PlanResolution, RandomPermute) { runRandom(Kind::Permute, 4, 60); }
TEST(PlanResolution, RandomConcat) { runRandom(Kind::Concat, 5, 60); }
TEST(PlanResolution, RandomSplit) { runRandom(Kind::Split, 6, 60); }
TEST(PlanResolution, RandomCast) { runRandom(Kind::Cast, 7, 60); }
TEST(PlanResolution, RandomPermuteCast) { runRandom(Kind::PermuteCast, 8, 60); }
TEST(PlanResolution, RandomReshape) { runRandom(Kind::Reshape, 9, 40); }
TEST(PlanResolution, RandomMixed) { runRandom(Kind::Mixed, 10, 40); }

Case fanOutCase(Rng &rng, bool reshape) {
  Case c;
  c.kind = reshape ? "fan-out+reshape" : "fan-out";
  static const int64_t kBudgets[] = {16,  48,   64,   100,
                                     256, 1000, 4096, int64_t(1) << 30};
  c.budget = kBudgets[rng.range(0, 7)];
  DType dtype = randomFloat(rng);
  if (dtype == DType::F16)
    dtype = DType::F32; // a cast to float16 must change it
  std::ostringstream config;
  KeySpec a;
  a.key = "a";
  a.dtype = dtype;
  if (reshape) {
    std::vector<int64_t> canonical = {rng.range(1, 3), rng.range(1, 3),
                                      rng.range(1, 3)};
    std::vector<int64_t> flattened = {canonical[0] * canonical[1],
                                      canonical[2]};
    bool flatten = rng.chance(0.5);
    std::vector<int64_t> from = flatten ? canonical : flattened;
    std::vector<int64_t> to = flatten ? flattened : canonical;
    a.shape = from;
    int counter = 0;
    for (int64_t r : rng.distinct(0, kMaxRank, size_t(rng.range(1, 2))))
      a.shards.push_back(shard(uint32_t(r), "src",
                               "a@" + std::to_string(counter++),
                               wholeBox(from)));
    KeySpec out = key("r", to, {}, dtype);
    int64_t unit = flatten ? canonical[1] : 1;
    for (const Interval &blocks : randomCuts(rng, canonical[0])) {
      std::vector<int64_t> offset(to.size(), 0), extent = to;
      offset[0] = blocks.begin * unit;
      extent[0] = (blocks.end - blocks.begin) * unit;
      uint32_t r = uint32_t(rng.range(0, kMaxRank));
      out.shards.push_back(shard(r, "dst", "r@" + std::to_string(counter++),
                                 Box(offset, extent)));
    }
    c.destination.push_back(out);
    config << "a -> r, reshape='" << str(canonical) << "'\n";
    Box fromBox = wholeBox(from), toBox = wholeBox(to);
    c.model["r"] = [fromBox, toBox](const std::string &, const Point &q) {
      return std::make_pair(std::string("a"),
                            pointAt(fromBox, indexIn(toBox, q)));
    };
  } else {
    a.shape = randomShape(rng, size_t(rng.range(1, 3)), 6);
    randomSourceLayout(rng, a);
  }
  c.source.push_back(a);
  size_t rank = a.shape.size();
  std::vector<int> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  for (int64_t j = rng.range(2, 4); j > 0; --j) {
    std::string name = "b" + std::to_string(j);
    int64_t pick = rng.range(0, 3);
    size_t axis = size_t(rng.range(0, int64_t(rank) - 1));
    if (pick == 3 && a.shape[axis] % 2 != 0)
      pick = 0; // no even split along that axis: a copy
    switch (pick) {
    case 0:
      c.destination.push_back(destinationKey(rng, name, dtype, a.shape));
      config << "a -> " << name << "\n";
      c.model[name] = permuteModel("a", identity);
      break;
    case 1: {
      std::vector<int> perm = identity;
      rng.shuffle(perm);
      c.destination.push_back(
          destinationKey(rng, name, dtype, permuted(a.shape, perm)));
      config << "a -> " << name << ", permute='" << spellPermutation(rng, perm)
             << "'\n";
      c.model[name] = permuteModel("a", perm);
      break;
    }
    case 2:
      c.destination.push_back(destinationKey(rng, name, DType::F16, a.shape));
      config << "a -> " << name << ", dtype='float16'\n";
      c.model[name] = permuteModel("a", identity);
      break;
    default: {
      std::vector<int64_t> half = a.shape;
      half[axis] /= 2;
      config << "a -> " << name << "_0, " << name << "_1, axis=" << axis
             << "\n";
      for (int64_t part = 0; part < 2; ++part) {
        std::string piece = name + "_" + std::to_string(part);
        c.destination.push_back(destinationKey(rng, piece, dtype, half));
        int64_t offset = half[axis] * part;
        c.model[piece] = [offset, axis](const std::string &, const Point &p) {
          Point q = p;
          q[axis] += offset;
          return std::make_pair(std::string("a"), q);
        };
      }
      break;
    }
    }
  }
  c.config = config.str();
  return c;
}

// Overlapping reads in every shape (fanOutCase): besides every check of the
// random tests above, no source element is read twice on its rank (a source
// tensor is read on one rank only), except where a statement reshapes: its
// transfers cannot be cut (Schedule.cpp), so there elements may be read again
// (counted and printed, not checked).
TEST(PlanResolution, RandomFanOutReadsEverySourceElementOnce) {
  Rng rng(11);
  Stats plain, reshaped;
  int failures = 0;
  for (int i = 0; i < 150 && failures < 3; ++i) {
    bool reshape = rng.chance(0.25);
    Case c = fanOutCase(rng, reshape);
    Stats stats;
    std::vector<std::string> errors = compileAndRun(c, stats);
    if (!reshape && stats.elementsReadAgain != 0)
      errors.push_back(std::to_string(stats.elementsReadAgain) +
                       " source elements read twice on their rank");
    if (!errors.empty()) {
      ADD_FAILURE() << "case " << i << "\n" << c.describe() << joined(errors);
      ++failures;
    }
    Stats &sum = reshape ? reshaped : plain;
    sum.cases += stats.cases;
    sum.reads += stats.reads;
    sum.multiRound += stats.multiRound;
    sum.elementsReadAgain += stats.elementsReadAgain;
  }
  EXPECT_GT(reshaped.cases, 0u);
  std::cerr << "[fan-out] cases " << plain.cases << " (multi-round "
            << plain.multiRound << "), reads " << plain.reads
            << "; with a reshape: cases " << reshaped.cases << ", reads "
            << reshaped.reads << ", source elements read again "
            << reshaped.elementsReadAgain << "\n";
}

} // namespace
