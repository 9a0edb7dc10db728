//===- RankRoundTest.cpp - One rank's round, shared by the backends -------===//
//
// A RankRound sorts a round's live instructions into phases, puts chained
// copies into levels, and sizes and lays out the round's arena: with the
// buffers a recv defines (the mpi backend receives into them) or without
// (the local backend points them at the sender's buffers).
//
//===----------------------------------------------------------------------===//
#include "CapturedDiagnostics.h"
#include "SamplePlanText.h"

#include "aoa/formats/plan/PlanReader.h"
#include "aoa/runtime/exec/RankRound.h"

#include <gtest/gtest.h>

namespace aoa {
namespace {

using runtime::RankRound;
using runtime::ReceivedBuffers;

class RankRoundTest : public ::testing::Test {
protected:
  void SetUp() override {
    text = test::kSamplePlanText;
    plan = readPlanText("sample.plan", text, captured.sources, captured.diags);
    ASSERT_TRUE(plan) << captured.all();
  }
  test::CapturedDiagnostics captured;
  std::string text;
  std::optional<plan::Plan> plan;
};

TEST_F(RankRoundTest, SortsInstructionsIntoPhases) {
  RankRound round(*plan, 0, 0);
  EXPECT_FALSE(round.empty());
  EXPECT_EQ(round.where(), "rank 0, round 0");
  EXPECT_EQ(round.reads(), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(round.sends(), (std::vector<uint32_t>{2}));
  EXPECT_EQ(round.receives(), (std::vector<uint32_t>{3}));
  ASSERT_EQ(round.copyLevels().size(), 1u);
  EXPECT_EQ(round.copyLevels()[0], (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(round.writes(), (std::vector<uint32_t>{6, 7, 8}));
  // Rank 0 has nothing to do in round 1; no rank has a round 2.
  EXPECT_TRUE(RankRound(*plan, 0, 1).empty());
  EXPECT_TRUE(RankRound(*plan, 1, 2).empty());
}

TEST_F(RankRoundTest, KeepsOnlyLiveInstructions) {
  // Rank 1, round 0 without the q reshape (read %2, copy %4, its write).
  std::vector<uint8_t> live = {1, 1, 0, 1, 1, 0, 1, 0};
  RankRound round(*plan, 1, 0, live);
  EXPECT_EQ(round.reads(), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(round.sends(), (std::vector<uint32_t>{3}));
  EXPECT_EQ(round.receives(), (std::vector<uint32_t>{4}));
  EXPECT_TRUE(round.copyLevels().empty());
  EXPECT_EQ(round.writes(), (std::vector<uint32_t>{6}));
  EXPECT_TRUE(RankRound(*plan, 1, 1, std::vector<uint8_t>(3, 0)).empty());
}

TEST_F(RankRoundTest, ArenasHoldEveryBufferOnACacheLine) {
  // Rank 0, round 0: six buffers of 32 or 64 bytes, two of them received.
  const plan::Round &round = plan->programs[0].rounds[0];
  EXPECT_EQ(runtime::roundArenaBytes(round, ReceivedBuffers::Owned), 6u * 64);
  EXPECT_EQ(runtime::roundArenaBytes(round, ReceivedBuffers::Borrowed),
            4u * 64);
  EXPECT_EQ(runtime::largestRoundArenaBytes(*plan, 1, ReceivedBuffers::Owned),
            5u * 64);

  std::vector<uint8_t> arena(6 * 64);
  RankRound owned(*plan, 0, 0);
  owned.layOutBuffers(arena.data(), ReceivedBuffers::Owned);
  for (uint32_t b = 0; b < 6; ++b)
    EXPECT_EQ(owned.buffer(b), arena.data() + 64 * b) << b;
  RankRound borrowed(*plan, 0, 0);
  borrowed.layOutBuffers(arena.data(), ReceivedBuffers::Borrowed);
  EXPECT_EQ(borrowed.buffer(1), arena.data() + 64);
  EXPECT_EQ(borrowed.buffer(2), nullptr);
  EXPECT_EQ(borrowed.buffer(3), nullptr);
  EXPECT_EQ(borrowed.buffer(4), arena.data() + 128);
  borrowed.setBuffer(2, arena.data());
  EXPECT_EQ(borrowed.buffer(2), arena.data());
  EXPECT_EQ(borrowed.bufferBytes(2), 32u);
}

TEST_F(RankRoundTest, ArenasHoldOnlyTheBuffersLiveInstructionsUseInMemory) {
  // Every instruction live: every buffer (received ones as above).
  RankRound full(*plan, 1, 0);
  std::vector<uint8_t> owned = full.buffersInArena(ReceivedBuffers::Owned);
  EXPECT_EQ(owned, (std::vector<uint8_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(full.arenaBytes(owned),
            runtime::roundArenaBytes(full.round(), ReceivedBuffers::Owned));
  EXPECT_EQ(full.buffersInArena(ReceivedBuffers::Borrowed),
            (std::vector<uint8_t>{1, 1, 1, 0, 1}));

  // Without the q reshape: %2 and %4 are used by nothing live.
  std::vector<uint8_t> live = {1, 1, 0, 1, 1, 0, 1, 0};
  RankRound partial(*plan, 1, 0, live);
  std::vector<uint8_t> inArena = partial.buffersInArena(ReceivedBuffers::Owned);
  EXPECT_EQ(inArena, (std::vector<uint8_t>{1, 1, 0, 1, 0}));
  EXPECT_EQ(partial.arenaBytes(inArena), 3u * 64);
  std::vector<uint8_t> arena(3 * 64);
  partial.layOutBuffers(arena.data(), inArena);
  EXPECT_EQ(partial.buffer(0), arena.data());
  EXPECT_EQ(partial.buffer(1), arena.data() + 64);
  EXPECT_EQ(partial.buffer(2), nullptr);
  EXPECT_EQ(partial.buffer(3), arena.data() + 128);
  EXPECT_EQ(partial.buffer(4), nullptr);

  // A read or write marked as copied file to file keeps its buffer while
  // another live instruction uses it: %1 is also sent, %3 received.
  std::vector<uint8_t> marked(8, 0);
  marked[1] = marked[6] = 1;
  EXPECT_EQ(partial.buffersInArena(ReceivedBuffers::Owned, marked),
            (std::vector<uint8_t>{1, 1, 0, 1, 0}));
  EXPECT_EQ(partial.buffersInArena(ReceivedBuffers::Borrowed, marked),
            (std::vector<uint8_t>{1, 1, 0, 0, 0}));
}

/// A plan of one rank and one round of `buffers` float32 buffers of
/// `elements` each, its instructions added by add().
struct OneRoundPlan {
  OneRoundPlan(size_t buffers, int64_t elements) {
    plan.ranks = 1;
    plan.programs.resize(1);
    plan.programs[0].rounds.emplace_back().buffers.resize(
        buffers, plan::BufferDecl{DType::F32, {elements}});
  }
  void add(plan::Opcode opcode, uint32_t buffer, uint32_t input = 0) {
    plan::Instruction &inst =
        plan.programs[0].rounds[0].instructions.emplace_back();
    inst.opcode = opcode;
    inst.buffer = buffer;
    inst.input = input;
  }
  plan::Plan plan;
};

TEST(RankRoundArena, ABufferOnlyCopiedFileToFileTakesNoMemory) {
  OneRoundPlan one(2, 1024);
  one.add(plan::Opcode::Read, 0);
  one.add(plan::Opcode::Write, 0);
  one.add(plan::Opcode::Read, 1);
  one.add(plan::Opcode::Write, 1);
  const plan::Plan &plan = one.plan;
  RankRound rankRound(plan, 0, 0);
  std::vector<uint8_t> inArena = rankRound.buffersInArena(
      ReceivedBuffers::Owned, std::vector<uint8_t>{1, 1, 0, 0});
  EXPECT_EQ(inArena, (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(rankRound.arenaBytes(inArena), 4096u);
  std::vector<uint8_t> arena(4096);
  rankRound.layOutBuffers(arena.data(), inArena);
  EXPECT_EQ(rankRound.buffer(0), nullptr);
  EXPECT_EQ(rankRound.buffer(1), arena.data());
}

TEST(RankRoundCopyLevels, ACopyOfACopyRunsInALaterLevel) {
  OneRoundPlan one(5, 4);
  one.add(plan::Opcode::Read, 0);
  one.add(plan::Opcode::Copy, 1, 0);
  one.add(plan::Opcode::Copy, 2, 1);
  one.add(plan::Opcode::Copy, 3, 0);
  one.add(plan::Opcode::Copy, 4, 2);
  RankRound rankRound(one.plan, 0, 0);
  ASSERT_EQ(rankRound.copyLevels().size(), 3u);
  EXPECT_EQ(rankRound.copyLevels()[0], (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(rankRound.copyLevels()[1], (std::vector<uint32_t>{2}));
  EXPECT_EQ(rankRound.copyLevels()[2], (std::vector<uint32_t>{4}));
}

} // namespace
} // namespace aoa
