//===- PlanResolutionSharedSourceTest.cpp - Plans for shared sources ------===//
//
// Plans compiled with --shared-src (every rank sees every source file): the
// rank that writes a piece reads it itself, so no bytes travel between
// ranks, whatever the statements and the layouts; among replicas a rank
// prefers its own, then the least-read file, and reads each element from
// one copy.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionModel.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace aoa;
using namespace aoa::plan_resolution_test;

namespace {

/// Failures for messages, and for elements that one rank reads from two
/// different stored tensors (two copies of it).
std::vector<std::string> sharedSourceFailures(const plan::Plan &plan) {
  std::vector<std::string> failures;
  if (plan.sourceAccess != plan::SourceAccess::Shared)
    failures.push_back("the plan does not record shared source access");
  std::map<std::tuple<size_t, std::string, Point>, uint32_t> readFrom;
  for (size_t rank = 0; rank < plan.programs.size(); ++rank)
    for (const plan::Round &round : plan.programs[rank].rounds)
      for (const plan::Instruction &in : round.instructions) {
        if (in.opcode == plan::Opcode::Send || in.opcode == plan::Opcode::Recv)
          failures.push_back("rank " + std::to_string(rank) +
                             " exchanges a message with rank " +
                             std::to_string(in.peer));
        if (in.opcode != plan::Opcode::Read)
          continue;
        const plan::StoredTensor &t = plan.sourceTensors[in.tensor];
        forEachPoint(in.region, [&](const Point &p) {
          auto [it, inserted] =
              readFrom.emplace(std::make_tuple(rank, t.key, p), in.tensor);
          if (!inserted && it->second != in.tensor)
            failures.push_back("rank " + std::to_string(rank) + " reads " +
                               t.key + str(p) + " from source tensors " +
                               std::to_string(it->second) + " and " +
                               std::to_string(in.tensor));
        });
      }
  if (failures.size() > 20)
    failures.resize(20);
  return failures;
}

/// Bytes read from each source file, by path.
std::map<std::string, int64_t> bytesReadPerFile(const plan::Plan &plan) {
  std::map<std::string, int64_t> bytes;
  for (const plan::RankProgram &program : plan.programs)
    for (const plan::Round &round : program.rounds)
      for (const plan::Instruction &in : round.instructions)
        if (in.opcode == plan::Opcode::Read) {
          const plan::StoredTensor &t = plan.sourceTensors[in.tensor];
          bytes[plan.sourceFiles[t.file].path] +=
              in.region.volume() * int64_t(dtypeSize(t.dtype));
        }
  return bytes;
}

size_t messages(const plan::Plan &plan) {
  size_t count = 0;
  for (const plan::RankProgram &program : plan.programs)
    for (const plan::Round &round : program.rounds)
      for (const plan::Instruction &in : round.instructions)
        count += in.opcode == plan::Opcode::Send;
  return count;
}

/// Random cases of `kind` compiled with --shared-src, executed on labels
/// (every element lands where the statements say, buffers within budget,
/// no region read twice by a rank), with no message and no element read
/// from two copies by one rank.
void runShared(Kind kind, uint64_t seed, int count) {
  Rng rng(seed);
  Stats stats;
  int failures = 0;
  for (int i = 0; i < count && failures < 3; ++i) {
    Case c = randomCase(rng, kind);
    c.sharedSource = true;
    std::vector<std::string> errors =
        compileAndRun(c, stats, sharedSourceFailures);
    if (!errors.empty()) {
      ADD_FAILURE() << "case " << i << " (seed " << seed << ")\n"
                    << c.describe() << joined(errors);
      ++failures;
    }
  }
  EXPECT_EQ(stats.cases, size_t(count));
  EXPECT_EQ(stats.messages, 0u);
  EXPECT_GT(stats.replicatedSource, 0u);
}

TEST(PlanResolutionSharedSource, RandomIdentity) {
  runShared(Kind::Identity, 401, 100);
}
TEST(PlanResolutionSharedSource, RandomPermuteCast) {
  runShared(Kind::PermuteCast, 402, 60);
}
TEST(PlanResolutionSharedSource, RandomConcatAndSplit) {
  runShared(Kind::Concat, 403, 40);
  runShared(Kind::Split, 404, 40);
}
TEST(PlanResolutionSharedSource, RandomReshape) {
  runShared(Kind::Reshape, 405, 40);
}
TEST(PlanResolutionSharedSource, RandomMixed) {
  runShared(Kind::Mixed, 406, 40);
}

// x float32[8] stored whole on ranks 0, 1 and 2 (a file each), written
// whole by ranks 0 .. 5. By default ranks 0-2 read their own copies and
// send them to ranks 3-5. With --shared-src every rank reads its own copy
// of x itself: ranks 0-2 from their own files, ranks 3-5 each from the file
// that has been read least so far, so every file is read twice.
TEST(PlanResolutionSharedSource, WritersReadThemselvesSpreadOverFiles) {
  Case c;
  c.kind = "identity";
  std::vector<ShardSpec> copies, written;
  for (uint32_t rank = 0; rank < 3; ++rank)
    copies.push_back(shard(rank, "src", "x", wholeBox({8})));
  for (uint32_t rank = 0; rank < 6; ++rank)
    written.push_back(shard(rank, "dst", "x", wholeBox({8})));
  c.source.push_back(key("x", {8}, copies));
  c.destination.push_back(key("x", {8}, written));

  Compiled owner = compile(c);
  ASSERT_TRUE(owner.ok) << joined(owner.errors);
  EXPECT_TRUE(execute(c, owner.plan).empty());
  EXPECT_EQ(owner.plan.sourceAccess, plan::SourceAccess::Owner);
  EXPECT_EQ(bytesReadPerRank(owner.plan),
            (std::vector<int64_t>{32, 32, 32, 0, 0, 0}));
  EXPECT_EQ(messages(owner.plan), 3u);

  c.sharedSource = true;
  Compiled shared = compile(c);
  ASSERT_TRUE(shared.ok) << joined(shared.errors);
  EXPECT_TRUE(execute(c, shared.plan).empty());
  EXPECT_TRUE(sharedSourceFailures(shared.plan).empty())
      << joined(sharedSourceFailures(shared.plan));
  EXPECT_EQ(bytesReadPerRank(shared.plan), (std::vector<int64_t>(6, 32)));
  std::map<std::string, int64_t> perFile = bytesReadPerFile(shared.plan);
  ASSERT_EQ(perFile.size(), 3u);
  for (const auto &[path, bytes] : perFile)
    EXPECT_EQ(bytes, 64) << path;
}

// A rank that needs one element twice (two destination shards of it on
// one rank) reads it from one copy: rank 2 holds x[0:4] and x[2:6] of x
// float32[6], stored whole on ranks 0 and 1.
TEST(PlanResolutionSharedSource, RankReadsAnElementFromOneCopy) {
  Case c;
  c.kind = "identity";
  c.source.push_back(key("x", {6},
                         {shard(0, "src", "x", wholeBox({6})),
                          shard(1, "src", "x", wholeBox({6}))}));
  ShardSpec low = shard(2, "dst", "x0", Box({0}, {4}));
  ShardSpec high = shard(2, "dst", "x1", Box({2}, {4}));
  high.file = "dst_r2b.safetensors";
  c.destination.push_back(key("x", {6}, {low, high}));
  c.sharedSource = true;
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_TRUE(sharedSourceFailures(compiled.plan).empty())
      << joined(sharedSourceFailures(compiled.plan));
  EXPECT_EQ(bytesReadPerRank(compiled.plan), (std::vector<int64_t>{0, 0, 24}));
}

} // namespace
