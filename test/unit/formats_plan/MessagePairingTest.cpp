//===- MessagePairingTest.cpp - The pairing rule of sends and recvs -------===//
//
// roundMessages groups a round's sends and recvs by link (from, to), each in
// program order, so that the j-th recv takes the j-th send; instructions
// whose peer is invalid or that move nothing are left to the verifier.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/MessagePairing.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace aoa;
using namespace aoa::plan;

namespace {

Instruction exchange(Opcode opcode, uint32_t peer, std::vector<uint32_t> buffers) {
  Instruction in;
  in.opcode = opcode;
  in.peer = peer;
  in.buffers.assign(buffers.begin(), buffers.end());
  return in;
}

Instruction read() {
  Instruction in;
  in.opcode = Opcode::Read;
  return in;
}

using Links = std::map<std::pair<uint32_t, uint32_t>, LinkMessages>;
using Ids = std::vector<uint32_t>;
/// (from, to, sends, recvs) per link, in link order.
using FlatLinks = std::vector<std::tuple<uint32_t, uint32_t, Ids, Ids>>;

FlatLinks flatten(const Links &links) {
  FlatLinks out;
  for (const auto &[link, m] : links)
    out.emplace_back(link.first, link.second, m.sends, m.recvs);
  return out;
}

} // namespace

TEST(MessagePairing, LinksHoldSendsAndRecvsInProgramOrder) {
  Plan plan;
  plan.ranks = 3;
  plan.programs.resize(3);
  // Rank 0: two sends to 1, then a recv from 2. Rank 1: recvs from 0 in
  // the same order. Rank 2: a send to 0, and nothing in round 1.
  plan.programs[0].rounds.resize(2);
  plan.programs[0].rounds[0].instructions = {
      read(), exchange(Opcode::Send, 1, {0}), read(),
      exchange(Opcode::Send, 1, {1, 2}), exchange(Opcode::Recv, 2, {3})};
  plan.programs[1].rounds.resize(2);
  plan.programs[1].rounds[0].instructions = {exchange(Opcode::Recv, 0, {0}),
                                             exchange(Opcode::Recv, 0, {1, 2})};
  plan.programs[1].rounds[1].instructions = {exchange(Opcode::Send, 0, {0})};
  plan.programs[2].rounds.resize(1);
  plan.programs[2].rounds[0].instructions = {read(), exchange(Opcode::Send, 0, {0})};
  plan.programs[0].rounds[1].instructions = {exchange(Opcode::Recv, 1, {0})};

  FlatLinks round0 = {{0, 1, Ids{1, 3}, Ids{0, 1}}, {2, 0, Ids{1}, Ids{4}}};
  EXPECT_EQ(flatten(roundMessages(plan, 0)), round0);
  // Rank 2 has no round 1; the others pair one message 1 -> 0.
  FlatLinks round1 = {{1, 0, Ids{0}, Ids{0}}};
  EXPECT_EQ(flatten(roundMessages(plan, 1)), round1);
  EXPECT_TRUE(roundMessages(plan, 2).empty());
}

TEST(MessagePairing, UnmatchedSidesStayVisible) {
  Plan plan;
  plan.ranks = 2;
  plan.programs.resize(2);
  for (RankProgram &program : plan.programs)
    program.rounds.resize(1);
  plan.programs[0].rounds[0].instructions = {exchange(Opcode::Send, 1, {0}),
                                             exchange(Opcode::Send, 1, {1})};
  plan.programs[1].rounds[0].instructions = {exchange(Opcode::Recv, 0, {0})};
  Links links = roundMessages(plan, 0);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links.at({0, 1}).sends, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(links.at({0, 1}).recvs, (std::vector<uint32_t>{0}));
}

TEST(MessagePairing, InvalidPeersAndEmptyMessagesAreLeftToTheVerifier) {
  Plan plan;
  plan.ranks = 2;
  plan.programs.resize(2);
  for (RankProgram &program : plan.programs)
    program.rounds.resize(1);
  plan.programs[0].rounds[0].instructions = {
      exchange(Opcode::Send, 0, {0}),  // to itself
      exchange(Opcode::Send, 7, {0}),  // no rank 7
      exchange(Opcode::Send, 1, {}),   // moves nothing
      exchange(Opcode::Recv, 1, {1})};
  plan.programs[1].rounds[0].instructions = {exchange(Opcode::Send, 0, {0})};
  Links links = roundMessages(plan, 0);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links.at({1, 0}).sends, (std::vector<uint32_t>{0}));
  EXPECT_EQ(links.at({1, 0}).recvs, (std::vector<uint32_t>{3}));
}
