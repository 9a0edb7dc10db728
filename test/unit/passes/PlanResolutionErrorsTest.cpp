//===- PlanResolutionErrorsTest.cpp - Holes, overlaps and former bugs ---===//
//
// Error cases (holes in the source, overlapping non-replica source shards, one
// file on two ranks) and regression tests of former bugs in plan resolution.
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

//===----------------------------------------------------------------------===//
// Error cases
//===----------------------------------------------------------------------===//

// Dropping every replica of one stored unit leaves a hole; a key stored as
// one unit keeps a smaller part of it instead (a key with no shards at all
// is SourceKeyWithoutShardsIsAHole).
TEST(PlanResolution, SourceHoleIsAnError) {
  Rng rng(101);
  int tested = 0;
  for (int i = 0; i < 60; ++i) {
    Case c = randomCase(rng, randomKind(rng));
    KeySpec &k = c.source[size_t(rng.range(0, int64_t(c.source.size()) - 1))];
    if (c.kind == std::string("reshape") && k.key == "a")
      continue; // a hole under a reshape: HoleUnderReshapeIsAHole
    auto unit =
        unitOf(k.shards[size_t(rng.range(0, int64_t(k.shards.size()) - 1))]);
    bool only =
        std::all_of(k.shards.begin(), k.shards.end(),
                    [&](const ShardSpec &s) { return unitOf(s) == unit; });
    if (only) {
      int64_t volume = k.shards[0].box.volume();
      if (volume < 2)
        continue;
      // Keep elements [0, volume - 1) or [1, volume) of the box.
      FlatElementRange kept = rng.chance(0.5) ? FlatElementRange{0, volume - 1}
                                              : FlatElementRange{1, volume};
      for (ShardSpec &s : k.shards)
        s.flat = kept;
    } else {
      k.shards.erase(
          std::remove_if(k.shards.begin(), k.shards.end(),
                         [&](const ShardSpec &s) { return unitOf(s) == unit; }),
          k.shards.end());
    }
    ++tested;
    expectError(c, "in no stored shard", i);
  }
  EXPECT_GT(tested, 40);
}

// A shard over stored units of other boxes: not their replica (replicas
// have equal boxes, whatever their flat ranges).
TEST(PlanResolution, OverlappingSourceShardsAreAnError) {
  Rng rng(102);
  for (int i = 0; i < 60; ++i) {
    Case c = randomCase(rng, randomKind(rng));
    KeySpec &k = c.source[size_t(rng.range(0, int64_t(c.source.size()) - 1))];
    Box whole = wholeBox(k.shape);
    bool single = true;
    for (const ShardSpec &s : k.shards)
      single &= s.box == whole;
    ShardSpec extra;
    extra.rank = uint32_t(rng.range(0, kMaxRank));
    extra.file = fileOf("src", extra.rank);
    extra.name = k.key + "@overlap";
    extra.box = whole;
    if (single) {
      // Every shard has the key's box (whole or flat ranges of it), so a
      // whole-key shard would be their replica: overlap them with a strict
      // part of the key.
      if (whole.volume() < 2)
        continue;
      std::vector<int64_t> shape = k.shape;
      size_t axis = 0;
      while (shape[axis] < 2)
        ++axis;
      shape[axis] -= 1;
      extra.box = Box(std::vector<int64_t>(shape.size(), 0), shape);
    }
    k.shards.insert(k.shards.begin() + rng.range(0, int64_t(k.shards.size())),
                    extra);
    expectError(c, "overlap", i);
  }
}

// Two ranks' shards in one file, on either side.
TEST(PlanResolution, FileOnTwoRanksIsAnError) {
  Rng rng(103);
  for (int i = 0; i < 60; ++i) {
    Kind kind = randomKind(rng);
    Case c = randomCase(rng, kind);
    bool destination = rng.chance(0.5);
    std::vector<KeySpec> &keys = destination ? c.destination : c.source;
    if (!destination)
      // Every stored source shard is read only without replicas.
      for (KeySpec &k : keys) {
        k.shards.clear();
        randomSourceLayout(rng, k, /*replicas=*/false);
      }
    std::vector<ShardSpec *> all;
    for (KeySpec &k : keys)
      for (ShardSpec &s : k.shards)
        all.push_back(&s);
    if (all.size() < 2) {
      // One shard: give the key a second one in the same file.
      KeySpec &k = keys[0];
      k.shards.clear();
      if (destination)
        randomDestinationLayout(rng, k);
      else
        randomSourceLayout(rng, k, false);
      all.clear();
      for (KeySpec &key : keys)
        for (ShardSpec &s : key.shards)
          all.push_back(&s);
      if (all.size() < 2)
        continue;
    }
    size_t a = size_t(rng.range(0, int64_t(all.size()) - 1));
    size_t b = (a + size_t(rng.range(1, int64_t(all.size()) - 1))) % all.size();
    all[b]->file = all[a]->file;
    if (all[b]->rank == all[a]->rank)
      all[b]->rank = (all[a]->rank + 1) % (kMaxRank + 1);
    expectError(c, "belongs to rank", i);
  }
}



//===----------------------------------------------------------------------===//
// Regression tests of former bugs
//===----------------------------------------------------------------------===//

// Regression test (was a known bug).
// A source key present in the metadata with no stored shard at all.
// Input: source `x` float32[4] with no shards; destination `x` [0:4] on
// rank 0; no statements (ShardMetadataBuilder accepts a tensor without
// shards; the JSON metadata loader rejects one with "has no shards").
// Was (fixed): resolve-shard-sources says nothing (ResolveShardSources.cpp
// bindEntry returns early on `pieces.empty()`, which it takes to mean
// "its shards overlap; reported"); only verify reports
// "x[0:4] in 'dst_r0.safetensors': 4 of its 4 elements have no source".
// Expected: the hole diagnostic "... 4 of its elements are in no stored
// shard of the source", like any other hole.
TEST(PlanResolution, SourceKeyWithoutShardsIsAHole) {
    Case c;
  c.kind = "hole";
  c.source.push_back(key("x", {4}, {}));
  c.destination.push_back(key("x", {4}, {shard(0, "dst", "x", Box({0}, {4}))}));
  Compiled compiled = compile(c);
  EXPECT_FALSE(compiled.ok);
  EXPECT_TRUE(hasError(compiled, "in no stored shard"))
      << joined(compiled.errors);
}

// Regression test (was a known bug).
// A hole in a source that is reshaped is reported as a region "several
// stored shards hold".
// Input: source `a` float32[4, 1], one shard on rank 0, box [0:4, 0:1] with
// flat range [0, 3) (element 3 is stored nowhere); destination `b`
// float32[2, 2, 1] whole on rank 0; `a -> b, reshape='[2, 2, 1]'`.
// Was (fixed): "'b[0:2, 0:2, 0:1]' comes from a[0:4, 0:1], which several stored
// shards hold, through a reshape; splitting a reshaped region is not
// supported" (bindEntry checks `*part != wanted` before counting what is
// found). Expected: the hole diagnostic "... 1 of its elements are in no
// stored shard of the source": one shard holds part of the region and
// nothing holds the rest.
TEST(PlanResolution, HoleUnderReshapeIsAHole) {
    Case c;
  c.kind = "reshape";
  c.config = "a -> b, reshape='[2, 2, 1]'\n";
  c.source.push_back(
      key("a", {4, 1},
          {shard(0, "src", "a", Box({0, 0}, {4, 1}), FlatElementRange{0, 3})}));
  c.destination.push_back(
      key("b", {2, 2, 1}, {shard(0, "dst", "b", Box({0, 0, 0}, {2, 2, 1}))}));
  Compiled compiled = compile(c);
  EXPECT_FALSE(compiled.ok);
  EXPECT_TRUE(hasError(compiled, "in no stored shard"))
      << joined(compiled.errors);
}

// Regression test (was a known bug).
// An optimizer state that follows a cast model weight is rounded through
// the weight's dtype.
// Input: source `w` float32[2] and `w.moment1_0` float32[2] (rank 0, one
// file); destination `w` float16[2] and `w.moment1_0` float32[2] (rank 0);
// `w -> w, dtype='float16'`.
// Was (fixed): the state's copy is ["float16", "float32"]
// (ResolveShardSources.cpp transformOf appends a cast back to the state's
// dtype): every moment value is rounded to float16 precision (and values
// beyond 65504 become inf) although neither side stores it as float16.
// Expected: the state keeps its stored dtype untouched (Paddle casts model
// weights only): no cast at all in its transform.
TEST(PlanResolution, OptimizerStatesKeepTheirPrecision) {
    Case c;
  c.kind = "cast";
  c.config = "w -> w, dtype='float16'\n";
  c.source.push_back(key("w", {2}, {shard(0, "src", "w", Box({0}, {2}))}));
  c.source.push_back(
      key("w.moment1_0", {2}, {shard(0, "src", "w.moment1_0", Box({0}, {2}))}));
  c.destination.push_back(
      key("w", {2}, {shard(0, "dst", "w", Box({0}, {2}))}, DType::F16));
  c.destination.push_back(
      key("w.moment1_0", {2}, {shard(0, "dst", "w.moment1_0", Box({0}, {2}))}));
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  for (const plan::RankProgram &program : compiled.plan.programs)
    for (const plan::Round &round : program.rounds)
      for (const plan::Instruction &in : round.instructions) {
        if (in.opcode != plan::Opcode::Write ||
            compiled.plan.destinationTensors[in.tensor].key != "w.moment1_0")
          continue;
        // The written buffer, traced back through copies.
        for (const plan::Instruction &copy : round.instructions) {
          if (copy.opcode != plan::Opcode::Copy || copy.buffer != in.buffer)
            continue;
          for (const plan::TransformStep &step : compiled.plan.steps(copy))
            EXPECT_FALSE(step.kind == plan::TransformStep::Kind::Cast)
                << "w.moment1_0 is cast to " << step.text();
        }
      }
}

// Regression test (was a known bug).
// Replicas (equal global_offset and local_shape) stored differently: one
// whole, one as flat ranges.
// Input: source `x` float32[2]: rank 0 stores box [0:2] whole ('src_r0'),
// rank 1 stores the same box as flat ranges [0, 1) and [1, 2) ('src_r1');
// destination `x` [0:2] on rank 0; no statements.
// Was (fixed): "source key 'x': stored shards overlap in [0:1] (in
// 'src_r1...' and 'src_r0...') without being replicas", whose hint says
// "replicas have equal global_offset and local_shape" -- which these have.
// Expected: accepted (shards with one box are replicas whatever their flat
// ranges, SourceReplicas.h); rank 0 reads its own whole copy.
TEST(PlanResolution, ReplicasWithDifferentFlatSplits) {
  Case c;
  c.kind = "identity";
  c.source.push_back(
      key("x", {2},
          {shard(0, "src", "x", Box({0}, {2})),
           shard(1, "src", "x0", Box({0}, {2}), FlatElementRange{0, 1}),
           shard(1, "src", "x1", Box({0}, {2}), FlatElementRange{1, 2})}));
  c.destination.push_back(key("x", {2}, {shard(0, "dst", "x", Box({0}, {2}))}));
  Stats stats;
  std::vector<std::string> errors = compileAndRun(c, stats);
  EXPECT_TRUE(errors.empty()) << joined(errors);
}

// Overlapping (not identical) regions of one source tensor on one rank are
// cut into pieces that are equal or disjoint, so no source byte is read twice
// (Schedule.cpp, SplitOverlappingReads.h).
// Input: source `x` float32[4] whole on rank 0; destination `x` replicated:
// whole on rank 1, and as flat ranges [0, 2) and [2, 4) on rank 2.
// Expected: rank 0 reads [0:2] and [2:4] once each; both replicas are built
// from those two reads (this used to read [0:4] and then [0:2], [2:4] again).
TEST(PlanResolution, SourceBytesReadOnceOnOneRank) {
  Case c;
  c.kind = "identity";
  c.source.push_back(key("x", {4}, {shard(0, "src", "x", Box({0}, {4}))}));
  c.destination.push_back(
      key("x", {4},
          {shard(1, "dst", "x", Box({0}, {4})),
           shard(2, "dst", "x0", Box({0}, {4}), FlatElementRange{0, 2}),
           shard(2, "dst", "x1", Box({0}, {4}), FlatElementRange{2, 4})}));
  Stats stats;
  std::vector<std::string> errors = compileAndRun(c, stats);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  EXPECT_EQ(stats.elementsReadAgain, 0u);
}

/// One source key `a` read by 2..4 statements (copy, permute, cast, split in
/// two), each destination with its own random layout (grids, replicas, flat
/// ranges split differently), under budgets small enough that cutLarge cuts
/// along different axes: the regions a rank reads from `a` overlap in every
/// way. With `reshape`, `a` is stored whole (replicated) and one more
/// statement reshapes it, as in Kind::Reshape.

} // namespace
