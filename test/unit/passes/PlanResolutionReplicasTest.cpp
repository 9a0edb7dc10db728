//===- PlanResolutionReplicasTest.cpp - Replicas stored in different shapes ---===//
//
// Source replicas stored in different shapes (whole, split, flat): reads are
// shared, a rank holding two copies reads each element once, reshapes read
// a whole replica.
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
// Replicas stored in different shapes
//===----------------------------------------------------------------------===//

/// Source keys that a reshape statement of `config` reads.
std::set<std::string> reshapedSources(const std::string &config) {
  std::set<std::string> keys;
  std::istringstream lines(config);
  for (std::string line; std::getline(lines, line);) {
    size_t arrow = line.find("->");
    if (arrow == std::string::npos ||
        line.find("reshape=") == std::string::npos)
      continue;
    std::string source = line.substr(0, arrow);
    source.erase(source.find_last_not_of(' ') + 1);
    keys.insert(source);
  }
  return keys;
}

/// A shard of key `k` on `rank`, in the rank's usual source file or, now
/// and then, in a second one (so a rank may hold two copies of an element
/// in two files).
ShardSpec shapedShard(Rng &rng, const KeySpec &k, int &counter, uint32_t rank,
                      const Box &box, std::optional<FlatElementRange> flat) {
  ShardSpec s;
  s.rank = rank;
  s.file = rng.chance(0.25) ? "src_r" + std::to_string(rank) + "b.safetensors"
                            : fileOf("src", rank);
  s.name = k.key + "#" + std::to_string(counter++);
  s.box = box;
  s.flat = flat;
  return s;
}

/// One full copy of `box`: whole (sometimes spelled as the flat range
/// [0, volume)), or split into 1..3 flat ranges at cuts of its own, each on
/// a random rank.
void addShapedCopy(Rng &rng, KeySpec &k, int &counter, const Box &box) {
  if (rng.chance(0.4)) {
    std::optional<FlatElementRange> flat;
    if (rng.chance(0.2))
      flat = FlatElementRange{0, box.volume()};
    k.shards.push_back(shapedShard(rng, k, counter,
                                   uint32_t(rng.range(0, kMaxRank)), box,
                                   flat));
    return;
  }
  for (const FlatElementRange &r : randomRanges(rng, box.volume()))
    k.shards.push_back(
        shapedShard(rng, k, counter, uint32_t(rng.range(0, kMaxRank)), box, r));
}

/// Re-lays every source key of `c` with replicas in different shapes: each
/// box of a random grid gets 1..3 full copies (addShapedCopy) and sometimes a
/// partial one (a random flat range). A reshaped key must be read whole from
/// one replica, so it keeps its whole replicas and only gets flat copies on
/// ranks that hold one of them (the writer's own rank stays preferable).
void relayWithShapedReplicas(Rng &rng, Case &c) {
  std::set<std::string> reshaped = reshapedSources(c.config);
  for (KeySpec &k : c.source) {
    int counter = 0;
    if (reshaped.count(k.key)) {
      std::vector<ShardSpec> whole = k.shards;
      for (const ShardSpec &s : whole)
        if (rng.chance(0.7))
          for (const FlatElementRange &r :
               randomRanges(rng, s.box.volume()))
            k.shards.push_back(
                shapedShard(rng, k, counter, s.rank, s.box, r));
      rng.shuffle(k.shards);
      continue;
    }
    k.shards.clear();
    for (const Box &box : randomGrid(rng, k.shape)) {
      for (int64_t n = rng.range(1, 3); n > 0; --n)
        addShapedCopy(rng, k, counter, box);
      if (rng.chance(0.3)) {
        int64_t a = rng.range(0, box.volume() - 1);
        int64_t b = rng.range(a + 1, box.volume());
        k.shards.push_back(shapedShard(rng, k, counter,
                                       uint32_t(rng.range(0, kMaxRank)), box,
                                       FlatElementRange{a, b}));
      }
    }
    rng.shuffle(k.shards);
  }
}

/// Elements [a, b) of a shard's box that it stores.
std::pair<int64_t, int64_t> storedRangeOf(const ShardSpec &s) {
  return unitOf(s).second;
}

/// True when two shards of `k` with one box store it in different shapes.
bool hasShapedReplicas(const KeySpec &k) {
  std::map<std::vector<int64_t>, std::set<std::pair<int64_t, int64_t>>> byBox;
  for (const ShardSpec &s : k.shards) {
    std::vector<int64_t> box = s.box.offsets();
    std::vector<int64_t> shape = s.box.shape();
    box.insert(box.end(), shape.begin(), shape.end());
    byBox[box].insert(storedRangeOf(s));
  }
  for (const auto &entry : byBox) {
    // Different ranges that share an element: copies in different shapes.
    const std::set<std::pair<int64_t, int64_t>> &ranges = entry.second;
    for (auto i = ranges.begin(); i != ranges.end(); ++i)
      for (auto j = std::next(i); j != ranges.end(); ++j)
        if (i->first < j->second && j->first < i->second)
          return true;
  }
  return false;
}

/// Failures for source elements that one rank reads from two different
/// stored tensors (two copies of it): a rank reads an element once.
std::vector<std::string> elementsReadFromTwoCopies(const plan::Plan &plan) {
  std::vector<std::string> failures;
  std::map<std::tuple<size_t, std::string, Point>, uint32_t> readFrom;
  for (size_t rank = 0; rank < plan.programs.size(); ++rank)
    for (const plan::Round &round : plan.programs[rank].rounds)
      for (const plan::Instruction &in : round.instructions) {
        if (in.opcode != plan::Opcode::Read)
          continue;
        const plan::StoredTensor &t = plan.sourceTensors[in.tensor];
        forEachPoint(in.region, [&](const Point &p) {
          auto [it, inserted] =
              readFrom.emplace(std::make_tuple(rank, t.key, p), in.tensor);
          if (!inserted && it->second != in.tensor && failures.size() < 20)
            failures.push_back("rank " + std::to_string(rank) + " reads " +
                               t.key + str(p) + " from source tensors " +
                               std::to_string(it->second) + " and " +
                               std::to_string(in.tensor));
        });
      }
  return failures;
}

size_t readsOnRank(const plan::Plan &plan, size_t rank) {
  size_t reads = 0;
  for (const plan::Round &round : plan.programs[rank].rounds)
    for (const plan::Instruction &in : round.instructions)
      reads += in.opcode == plan::Opcode::Read;
  return reads;
}

// Random conversions (every statement kind) whose sources store replicas in
// different shapes; the plans are executed on labels as in the randomized
// tests above, with the same checks (own-rank copies preferred per element,
// every destination element written once with the predicted label), and no
// rank reads an element from two copies.
TEST(PlanResolution, RandomReplicasInDifferentShapes) {
  Rng rng(300);
  Stats stats;
  int failures = 0, shapedKeys = 0, reshaped = 0;
  const int count = 150;
  for (int i = 0; i < count && failures < 3; ++i) {
    Case c = randomCase(rng, i % 6 == 5 ? Kind::Mixed : randomKind(rng));
    relayWithShapedReplicas(rng, c);
    for (const KeySpec &k : c.source)
      shapedKeys += hasShapedReplicas(k);
    reshaped += !reshapedSources(c.config).empty();
    std::vector<std::string> errors =
        compileAndRun(c, stats, elementsReadFromTwoCopies);
    if (!errors.empty()) {
      ADD_FAILURE() << "case " << i << "\n" << c.describe() << joined(errors);
      ++failures;
    }
  }
  EXPECT_EQ(stats.cases, size_t(count));
  // The generator exercises what it should.
  EXPECT_GT(shapedKeys, count);
  EXPECT_GT(reshaped, 10);
  EXPECT_GT(stats.localReplicaChoices, 1000u);
  std::cerr << "[shaped replicas] cases " << stats.cases
            << ", keys with replicas in different shapes " << shapedKeys
            << ", cases with a reshape " << reshaped << ", reads "
            << stats.reads << ", elements " << stats.elements
            << ", elements whose writer holds one of several replicas "
            << stats.localReplicaChoices << "\n";
}

// The same layouts with one element of one key stored nowhere (every copy
// of it cut out of its flat range): the hole is reported, not read from a
// neighbouring copy.
TEST(PlanResolution, RandomHoleAmongShapedReplicasIsAnError) {
  Rng rng(301);
  int tested = 0;
  for (int i = 0; i < 80; ++i) {
    Case c = randomCase(rng, randomKind(rng));
    relayWithShapedReplicas(rng, c);
    KeySpec &k = c.source[size_t(rng.range(0, int64_t(c.source.size()) - 1))];
    const ShardSpec &some =
        k.shards[size_t(rng.range(0, int64_t(k.shards.size()) - 1))];
    Box box = some.box;
    int64_t hole = rng.range(0, box.volume() - 1);
    std::vector<ShardSpec> kept;
    int counter = 0;
    for (const ShardSpec &s : k.shards) {
      auto [a, b] = storedRangeOf(s);
      if (s.box != box || hole < a || hole >= b) {
        kept.push_back(s);
        continue;
      }
      // [a, hole) and [hole + 1, b), where not empty.
      for (auto [from, to] : {std::make_pair(a, hole),
                              std::make_pair(hole + 1, b)})
        if (from < to) {
          ShardSpec part = s;
          part.name = s.name + "~" + std::to_string(counter++);
          part.flat = FlatElementRange{from, to};
          kept.push_back(part);
        }
    }
    k.shards = std::move(kept);
    ++tested;
    expectError(c, "in no stored shard", i);
  }
  EXPECT_EQ(tested, 80);
}

// x float32[2]: whole on rank 0, as flat ranges [0, 1) and [1, 2) on rank 1.
Case xWholeAndSplit(std::vector<ShardSpec> destination) {
  Case c;
  c.kind = "identity";
  c.source.push_back(
      key("x", {2},
          {shard(0, "src", "x", Box({0}, {2})),
           shard(1, "src", "x0", Box({0}, {2}), FlatElementRange{0, 1}),
           shard(1, "src", "x1", Box({0}, {2}), FlatElementRange{1, 2})}));
  c.destination.push_back(key("x", {2}, std::move(destination)));
  return c;
}

// Neither replica is on the writer's rank: the two copies share the reads,
// one element each, although one copy is whole and the other split.
TEST(PlanResolution, ReplicasInDifferentShapesShareReads) {
  Case c = xWholeAndSplit({shard(2, "dst", "x", Box({0}, {2}))});
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_EQ(bytesReadPerRank(compiled.plan),
            (std::vector<int64_t>{4, 4, 0}));
}

// The writer's rank holds a whole copy: one read of it serves the whole
// shard (the segments of the split copy do not cut it), nothing is sent.
// On rank 1 both flat pieces are read locally.
TEST(PlanResolution, OwnRankCopyServesAcrossShapes) {
  Case c = xWholeAndSplit({shard(0, "dst", "x", Box({0}, {2})),
                           shard(1, "dst", "x", Box({0}, {2}))});
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_EQ(bytesReadPerRank(compiled.plan), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(readsOnRank(compiled.plan, 0), 1u);
  EXPECT_EQ(readsOnRank(compiled.plan, 1), 2u);
  for (const plan::RankProgram &program : compiled.plan.programs)
    for (const plan::Round &round : program.rounds)
      for (const plan::Instruction &in : round.instructions)
        EXPECT_NE(in.opcode, plan::Opcode::Send);
}

// Rank 0 holds two copies of x float32[3], in two files: x whole, and x0
// [0, 2) with x1 [2, 3). Destination replicas on ranks 1 and 2 need all of
// x. For rank 1, x[0:2] comes from x (a tie; the first listed) and x[2:3]
// from x1 (its file had read less). Rank 2's x[0:2] would come from x0 by
// file balance, but rank 0 already reads those elements from x: it reads
// each element from one copy, once (the reads are shared), 12 bytes.
TEST(PlanResolution, RankWithTwoCopiesReadsEachElementOnce) {
  Case c;
  c.kind = "identity";
  ShardSpec x0 = shard(0, "src", "x0", Box({0}, {3}), FlatElementRange{0, 2});
  ShardSpec x1 = shard(0, "src", "x1", Box({0}, {3}), FlatElementRange{2, 3});
  x0.file = x1.file = "src_r0b.safetensors";
  c.source.push_back(
      key("x", {3}, {shard(0, "src", "x", Box({0}, {3})), x0, x1}));
  c.destination.push_back(key("x", {3},
                              {shard(1, "dst", "x", Box({0}, {3})),
                               shard(2, "dst", "x", Box({0}, {3}))}));
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_TRUE(elementsReadFromTwoCopies(compiled.plan).empty())
      << joined(elementsReadFromTwoCopies(compiled.plan));
  EXPECT_EQ(bytesReadPerRank(compiled.plan),
            (std::vector<int64_t>{12, 0, 0}));
  std::set<std::string> names;
  for (const plan::StoredTensor &t : compiled.plan.sourceTensors)
    names.insert(t.name);
  EXPECT_EQ(names, (std::set<std::string>{"x", "x1"}));
}

// A reshape needs its region whole from one replica: the whole copy serves
// it (balance alone would split it between the copies).
TEST(PlanResolution, ReshapeReadsAWholeReplica) {
  Case c;
  c.kind = "reshape";
  c.config = "a -> b, reshape='[2, 2, 1]'\n";
  c.source.push_back(key(
      "a", {4, 1},
      {shard(0, "src", "a", Box({0, 0}, {4, 1})),
       shard(1, "src", "a0", Box({0, 0}, {4, 1}), FlatElementRange{0, 3}),
       shard(1, "src", "a1", Box({0, 0}, {4, 1}), FlatElementRange{3, 4})}));
  c.destination.push_back(
      key("b", {2, 2, 1}, {shard(2, "dst", "b", Box({0, 0, 0}, {2, 2, 1}))}));
  Box from = wholeBox({4, 1}), to = wholeBox({2, 2, 1});
  c.model["b"] = [from, to](const std::string &, const Point &q) {
    return std::make_pair(std::string("a"), pointAt(from, indexIn(to, q)));
  };
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_EQ(bytesReadPerRank(compiled.plan),
            (std::vector<int64_t>{16, 0, 0}));
}

// A shard whose box covers a reshaped region but whose flat range stores
// none of it does not take part: a[2:4] comes whole from the shard that
// stores it. a [4, 1]: box [0:4] flat [0, 2) on rank 0, box [2:4] on rank 1.
TEST(PlanResolution, ReshapeIgnoresBoxesThatStoreNoneOfTheRegion) {
  Case c;
  c.kind = "reshape";
  c.config = "a -> b, reshape='[2, 2, 1]'\n";
  c.source.push_back(key(
      "a", {4, 1},
      {shard(0, "src", "a", Box({0, 0}, {4, 1}), FlatElementRange{0, 2}),
       shard(1, "src", "a", Box({2, 0}, {2, 1}))}));
  c.destination.push_back(
      key("b", {2, 2, 1},
          {shard(0, "dst", "b", Box({0, 0, 0}, {1, 2, 1})),
           shard(1, "dst", "b", Box({1, 0, 0}, {1, 2, 1}))}));
  Box from = wholeBox({4, 1}), to = wholeBox({2, 2, 1});
  c.model["b"] = [from, to](const std::string &, const Point &q) {
    return std::make_pair(std::string("a"), pointAt(from, indexIn(to, q)));
  };
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
}

} // namespace

//===----------------------------------------------------------------------===//
// Many replicas (data parallelism): chosen from a heap of loads
//===----------------------------------------------------------------------===//

/// x float32[64] stored whole on ranks 0 .. replicas - 1 (each in its own
/// file), written as 64 one-element destination shards, shard i on rank
/// `writer(i)`.
template <typename Writer> Case manyReplicas(uint32_t replicas, Writer writer) {
  Case c;
  c.kind = "identity";
  std::vector<ShardSpec> copies, pieces;
  for (uint32_t rank = 0; rank < replicas; ++rank)
    copies.push_back(shard(rank, "src", "x", Box({0}, {64})));
  for (int64_t i = 0; i < 64; ++i)
    pieces.push_back(
        shard(writer(i), "dst", "x" + std::to_string(i), Box({i}, {1})));
  c.source.push_back(key("x", {64}, copies));
  c.destination.push_back(key("x", {64}, pieces));
  return c;
}

// 20 replicas, more than the 16 a scan serves (ShardSourceBinding.cpp),
// and writers on no replica's rank (ranks 20-31; the checker's model has at
// most 32): each element goes to the rank that has read the least so far,
// the first listed on a tie (the rule of the scan, worked by hand): element
// i from rank i % 20, so ranks 0-3 read four elements and ranks 4-19 three.
TEST(PlanResolution, ManyReplicasSpreadReadsAsTheScanDoes) {
  Case c = manyReplicas(20, [](int64_t i) { return uint32_t(20 + i % 12); });
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty())
      << joined(execute(c, compiled.plan));
  std::vector<int64_t> expected(32, 0);
  for (uint32_t rank = 0; rank < 20; ++rank)
    expected[rank] = rank < 4 ? 16 : 12;
  EXPECT_EQ(bytesReadPerRank(compiled.plan), expected);
}

// A writer on a replica's rank reads its own copy however much that rank
// has read already: rank 7 writes every element and reads all 64 itself.
TEST(PlanResolution, ManyReplicasPreferTheWritersOwnCopy) {
  Case c = manyReplicas(20, [](int64_t) { return uint32_t(7); });
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty())
      << joined(execute(c, compiled.plan));
  std::vector<int64_t> expected(20, 0);
  expected[7] = 256;
  EXPECT_EQ(bytesReadPerRank(compiled.plan), expected);
}
