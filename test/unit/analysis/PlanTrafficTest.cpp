//===- PlanTrafficTest.cpp - Bytes per rank, round and rank pair ----------===//
//
// The traffic of small hand-built plans: per-round entries only for ranks
// with work, sends counted on the sender and receives on the receiver, the
// sparse rank x rank matrix and its grouping into nodes.
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/PlanTraffic.h"

#include "PlanBuilder.h"

#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::analysis;
using aoa::test::PlanBuilder;

namespace {

TEST(PlanTrafficTest, CountsEachKindOfBytesPerRankAndRound) {
  PlanBuilder builder(3, 2);
  builder.read(0, 0, 100).send(0, 1, 0, 100).copy(1, 0, 40).write(1, 0, 40);
  builder.write(2, 1, 7);
  PlanTraffic traffic = computePlanTraffic(builder.plan());

  ASSERT_EQ(traffic.ranks, 3u);
  ASSERT_EQ(traffic.rounds.size(), 2u);
  // Round 0: ranks 0 and 1 only (rank 2 has nothing to do).
  ASSERT_EQ(traffic.rounds[0].ranks.size(), 2u);
  EXPECT_EQ(traffic.rounds[0].ranks[0].rank, 0u);
  EXPECT_EQ(traffic.rounds[0].ranks[0].traffic.read, 100);
  EXPECT_EQ(traffic.rounds[0].ranks[0].traffic.sent, 100);
  // Rank 0's buffers: the read's and the send's, 100 B each.
  EXPECT_EQ(traffic.rounds[0].ranks[0].traffic.bufferBytes, 200);
  EXPECT_EQ(traffic.rounds[0].ranks[1].rank, 1u);
  EXPECT_EQ(traffic.rounds[0].ranks[1].traffic.received, 100);
  EXPECT_EQ(traffic.rounds[0].ranks[1].traffic.copied, 40);
  EXPECT_EQ(traffic.rounds[0].ranks[1].traffic.written, 40);
  ASSERT_EQ(traffic.rounds[0].messages.size(), 1u);
  EXPECT_EQ(traffic.rounds[0].messages[0].from, 0u);
  EXPECT_EQ(traffic.rounds[0].messages[0].to, 1u);
  EXPECT_EQ(traffic.rounds[0].messages[0].bytes, 100);
  ASSERT_EQ(traffic.rounds[1].ranks.size(), 1u);
  EXPECT_EQ(traffic.rounds[1].ranks[0].rank, 2u);
  EXPECT_EQ(traffic.rounds[1].ranks[0].traffic.written, 7);

  EXPECT_EQ(traffic.rankTotals[1].received, 100);
  EXPECT_EQ(traffic.rankTotals[2].written, 7);
  EXPECT_EQ(traffic.total.read, 100);
  EXPECT_EQ(traffic.total.sent, 100);
  EXPECT_EQ(traffic.total.received, 100);
  EXPECT_EQ(traffic.total.written, 47);
  EXPECT_EQ(traffic.total.copied, 40);
  // The largest round's buffers on any rank: rank 0's 200 B (rank 1's
  // are 100 + 40 + 40 + 40 = 220 B: the receive, the copy's input and
  // output, the write's).
  EXPECT_EQ(traffic.total.bufferBytes, 220);
}

TEST(PlanTrafficTest, MatrixHoldsOnlyPairsThatExchangeBytes) {
  PlanBuilder builder(4, 2);
  builder.send(0, 1, 0, 100).send(0, 2, 0, 50);
  builder.send(0, 1, 1, 20).send(2, 0, 1, 7);
  PlanTraffic traffic = computePlanTraffic(builder.plan());

  TrafficMatrix expected = {{{0, 1}, 120}, {{0, 2}, 50}, {{2, 0}, 7}};
  EXPECT_EQ(traffic.sent, expected);
  EXPECT_EQ(traffic.rankTotals[0].sent, 170);
  EXPECT_EQ(traffic.rankTotals[0].received, 7);
  EXPECT_EQ(traffic.rankTotals[3].sent, 0);

  // Two ranks per node: 0 -> 1 stays inside node 0 (the diagonal), 0 -> 2
  // goes from node 0 to node 1, 2 -> 0 back.
  TrafficMatrix nodes = {{{0, 0}, 120}, {{0, 1}, 50}, {{1, 0}, 7}};
  EXPECT_EQ(groupMatrix(traffic.sent, 2), nodes);
  EXPECT_EQ(groupMatrix(traffic.sent, 1), expected);
}

TEST(PlanTrafficTest, PlanWithoutWorkHasEmptyRounds) {
  PlanBuilder builder(2, 1);
  PlanTraffic traffic = computePlanTraffic(builder.plan());
  ASSERT_EQ(traffic.rounds.size(), 1u);
  EXPECT_TRUE(traffic.rounds[0].ranks.empty());
  EXPECT_TRUE(traffic.sent.empty());
  EXPECT_EQ(traffic.rankTotals.size(), 2u);
}

} // namespace
