//===- PlanRankTest.cpp - One rank's part of a plan, and what spans ranks -===//
//
// A process of an mpi or nccl run reads only its rank's section of a binary
// plan, checks it alone (verifyPlanRank), and checks with the others what
// spans ranks: the header checksum names the whole plan, and the sums of
// exchangeSignature over sends and over recvs agree exactly when every
// message is paired. Each check is shown to fail on the fault it is for.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/formats/plan/MessagePairing.h"
#include "aoa/formats/plan/PlanReader.h"
#include "aoa/formats/plan/PlanVerifier.h"

#include "CapturedDiagnostics.h"
#include "SamplePlan.h"
#include "SamplePlanText.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace aoa;

namespace {

/// Sends minus recvs of the signatures summed over every rank (0 when every
/// message is paired).
uint64_t unpaired(const plan::Plan &plan) {
  uint64_t sends = 0, recvs = 0;
  for (uint32_t r = 0; r < plan.ranks; ++r) {
    plan::ExchangeSignature signature = plan::exchangeSignature(plan, r);
    sends += signature.sends;
    recvs += signature.recvs;
  }
  return sends - recvs;
}

/// The instruction of rank `rank`, round 0, with opcode `opcode` (the first).
plan::Instruction &first(plan::Plan &plan, uint32_t rank, plan::Opcode opcode) {
  for (plan::Instruction &in : plan.programs[rank].rounds[0].instructions)
    if (in.opcode == opcode)
      return in;
  ADD_FAILURE() << "no such instruction";
  return plan.programs[rank].rounds[0].instructions[0];
}

} // namespace

TEST(PlanRankTest, EachRankReadsItsSectionAndTheWholePlansChecksum) {
  plan::Plan plan = test::readSamplePlan();
  std::string bytes = binplan::encodeBinaryPlan(plan, {1, 2});
  uint64_t recorded;
  std::memcpy(&recorded, bytes.data() + 72, 8); // the header's own checksum
  for (uint32_t r = 0; r < 2; ++r) {
    test::CapturedDiagnostics captured;
    binplan::PlanOrigin origin;
    std::optional<plan::Plan> one = binplan::readBinaryPlanRankBytes(
        "p.bin", bytes, r, captured.diags, &origin);
    ASSERT_TRUE(one) << captured.all();
    EXPECT_EQ(one->onlyRank, std::optional<uint32_t>(r));
    EXPECT_EQ(origin.headerChecksum, std::optional<uint64_t>(recorded));
    EXPECT_EQ(origin, (binplan::PlanOrigin{1, 2}));
    EXPECT_TRUE(one->programs[1 - r].rounds.empty());
    EXPECT_EQ(one->programs[r].rounds.size(), 2u);
    EXPECT_TRUE(verifyPlanRank(*one, r, captured.diags)) << captured.all();
    // The pairing of a partial plan is the whole plan's, rank by rank.
    EXPECT_EQ(plan::exchangeSignature(*one, r).sends,
              plan::exchangeSignature(plan, r).sends);
  }
  // Another plan (one more round) has another checksum.
  plan.programs[0].rounds.emplace_back();
  plan.programs[1].rounds.emplace_back();
  std::string other = binplan::encodeBinaryPlan(plan, {1, 2});
  EXPECT_NE(std::memcmp(other.data() + 72, bytes.data() + 72, 8), 0);
}

TEST(PlanRankTest, WholePlanMessagesArePaired) {
  plan::Plan plan = test::readSamplePlan();
  EXPECT_EQ(unpaired(plan), 0u);
  plan::ExchangeSignature rank0 = plan::exchangeSignature(plan, 0);
  EXPECT_NE(rank0.sends, 0u);
  EXPECT_NE(rank0.recvs, 0u);
  EXPECT_EQ(plan::exchangeSignature(plan, 7).sends, 0u); // no such rank
}

TEST(PlanRankTest, AMissingRecvOrOtherTypesBreakThePairing) {
  // Rank 0 no longer receives rank 1's message.
  plan::Plan missing = test::readSamplePlan();
  std::vector<plan::Instruction> &list =
      missing.programs[0].rounds[0].instructions;
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].opcode == plan::Opcode::Recv) {
      list.erase(list.begin() + i);
      break;
    }
  EXPECT_NE(unpaired(missing), 0u);

  // Rank 1 expects bfloat16 where rank 0 sends float32.
  plan::Plan retyped = test::readSamplePlan();
  plan::Instruction &recv = first(retyped, 1, plan::Opcode::Recv);
  retyped.programs[1].rounds[0].buffers[recv.buffers[0]].dtype = DType::BF16;
  EXPECT_NE(unpaired(retyped), 0u);

  // Rank 0 sends its message in another round than rank 1 receives it.
  plan::Plan moved = test::readSamplePlan();
  plan::Instruction send = first(moved, 0, plan::Opcode::Send);
  std::vector<plan::Instruction> &round0 =
      moved.programs[0].rounds[0].instructions;
  for (size_t i = 0; i < round0.size(); ++i)
    if (round0[i].opcode == plan::Opcode::Send) {
      round0.erase(round0.begin() + i);
      break;
    }
  moved.programs[0].rounds[1].buffers = moved.programs[0].rounds[0].buffers;
  moved.programs[0].rounds[1].instructions.push_back(send);
  EXPECT_NE(unpaired(moved), 0u);

  // Two recvs of one link swapped: the j-th recv takes the j-th send.
  plan::Plan swapped = test::readSamplePlan();
  plan::Round &round = swapped.programs[1].rounds[0];
  plan::Instruction extra = first(swapped, 1, plan::Opcode::Recv);
  extra.buffers = {0};
  round.instructions.insert(round.instructions.begin() + 3, extra);
  plan::Instruction extraSend = first(swapped, 0, plan::Opcode::Send);
  extraSend.buffers = {0};
  swapped.programs[0].rounds[0].instructions.push_back(extraSend);
  // Sent in the order (%1 : f32[2, 8]), (%0 : bf16[4, 4]); received as
  // (%0 : bf16[4, 4]), (%3 : f32[2, 8]).
  EXPECT_NE(unpaired(swapped), 0u);
}

TEST(PlanRankTest, ARankChecksItsOwnRoundsAndTheTensorsItWrites) {
  // Rank 1 writes destination tensor 3 twice: rank 1's check finds it,
  // rank 0's (which holds neither the write nor the tensor's file) does not.
  plan::Plan plan = test::readSamplePlan();
  plan::Round &round = plan.programs[1].rounds[0];
  round.instructions.push_back(round.instructions.back());
  test::CapturedDiagnostics captured;
  EXPECT_TRUE(verifyPlanRank(plan, 0, captured.diags)) << captured.all();
  EXPECT_FALSE(verifyPlanRank(plan, 1, captured.diags));
  EXPECT_NE(captured.all().find("is written twice"), std::string::npos)
      << captured.all();

  // A write dropped from rank 0 leaves elements of its own file unwritten.
  plan::Plan hole = test::readSamplePlan();
  hole.programs[0].rounds[0].instructions.pop_back();
  test::CapturedDiagnostics second;
  EXPECT_TRUE(verifyPlanRank(hole, 1, second.diags)) << second.all();
  EXPECT_FALSE(verifyPlanRank(hole, 0, second.diags));
  EXPECT_NE(second.all().find("are never written"), std::string::npos)
      << second.all();

  // A bad buffer in rank 1's round is rank 1's alone.
  plan::Plan broken = test::readSamplePlan();
  broken.programs[1].rounds[1].instructions.back().buffer = 9;
  test::CapturedDiagnostics third;
  EXPECT_TRUE(verifyPlanRank(broken, 0, third.diags)) << third.all();
  EXPECT_FALSE(verifyPlanRank(broken, 1, third.diags));
}
