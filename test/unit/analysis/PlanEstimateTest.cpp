//===- PlanEstimateTest.cpp - The time model on hand-sized plans ----------===//
//
// Every expected time here is worked out by hand in the comment above it
// from the cluster's bandwidths (GB = 10^9 bytes), not by running the
// model again: shared disks and NICs, NVLink inside a node, copies, phases
// one after another, rounds summed, the ideal lower bound and memory
// warnings.
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/PlanEstimate.h"

#include "PlanBuilder.h"

#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::analysis;
using aoa::test::PlanBuilder;

namespace {

constexpr int64_t GB = 1000 * 1000 * 1000;

ClusterSpec testCluster() {
  ClusterSpec cluster;
  cluster.ranksPerNode = 2;
  cluster.diskReadGBps = 6;
  cluster.diskWriteGBps = 4;
  cluster.nicGBps = 25;
  cluster.nvlinkGBps = 300;
  cluster.copyGBps = 20;
  return cluster;
}

PlanEstimate estimate(const PlanBuilder &builder,
                      const ClusterSpec &cluster = testCluster()) {
  return estimatePlan(computePlanTraffic(builder.plan()), cluster);
}

const PhaseEstimate &phase(const PlanEstimate &e, size_t round, Phase p) {
  return e.rounds.at(round).phases[static_cast<size_t>(p)];
}

TEST(PlanEstimateTest, RanksOfOneNodeShareItsDisk) {
  // Ranks 0 and 1 (node 0) read 6 GB each: 12 GB through one 6 GB/s disk
  // = 2 s; with equal shares both finish together at 2 s.
  PlanBuilder builder(2, 1);
  builder.read(0, 0, 6 * GB).read(1, 0, 6 * GB);
  PlanEstimate e = estimate(builder);
  EXPECT_DOUBLE_EQ(e.seconds, 2.0);
  const PhaseEstimate &read = phase(e, 0, Phase::Read);
  EXPECT_DOUBLE_EQ(read.seconds, 2.0);
  EXPECT_EQ(read.bound.describe(), "disk read of node 0");
  EXPECT_EQ(read.boundBytes, 12 * GB);
  EXPECT_EQ(read.criticalRank, 0u); // a tie: the lower rank
  EXPECT_DOUBLE_EQ(e.ranks[0].busySeconds, 2.0);
  EXPECT_DOUBLE_EQ(e.ranks[1].busySeconds, 2.0);
}

TEST(PlanEstimateTest, RanksOfTwoNodesReadInParallel) {
  // Ranks per node 2: ranks 0 and 2 are on nodes 0 and 1, 6 GB each on its
  // own 6 GB/s disk = 1 s.
  PlanBuilder builder(4, 1);
  builder.read(0, 0, 6 * GB).read(2, 0, 6 * GB);
  PlanEstimate e = estimate(builder);
  EXPECT_DOUBLE_EQ(e.seconds, 1.0);
  EXPECT_EQ(phase(e, 0, Phase::Read).bound.describe(), "disk read of node 0");
}

TEST(PlanEstimateTest, SharedSourcePlansReadTheSharedFileSystem) {
  // Ranks 0 and 2 (nodes 0 and 1) read 6 GB each of a --shared-src plan.
  PlanBuilder builder(4, 1);
  builder.read(0, 0, 6 * GB).read(2, 0, 6 * GB).sharedSource();
  // Without shared_fs_read_GBps: from the node disks, 6 GB at 6 GB/s = 1 s.
  EXPECT_DOUBLE_EQ(estimate(builder).seconds, 1.0);
  // A shared file system of 8 GB/s for all nodes: 12 GB / 8 = 1.5 s (each
  // node's NIC takes 6 GB / 25 = 0.24 s).
  ClusterSpec cluster = testCluster();
  cluster.sharedFsReadGBps = 8;
  PlanEstimate e = estimate(builder, cluster);
  EXPECT_DOUBLE_EQ(e.seconds, 1.5);
  EXPECT_EQ(phase(e, 0, Phase::Read).bound.describe(),
            "reads of the shared file system");
  EXPECT_EQ(phase(e, 0, Phase::Read).boundBytes, 12 * GB);
  EXPECT_EQ(e.ideal.resource.kind, ResourceKind::SharedFsRead);
  // A fast one: node 0's two ranks read 10 GB each through its 25 GB/s NIC
  // = 0.8 s; the file system takes 20 GB / 100 = 0.2 s.
  cluster.sharedFsReadGBps = 100;
  PlanBuilder nic(4, 1);
  nic.read(0, 0, 10 * GB).read(1, 0, 10 * GB).sharedSource();
  PlanEstimate bound = estimate(nic, cluster);
  EXPECT_DOUBLE_EQ(bound.seconds, 0.8);
  EXPECT_EQ(phase(bound, 0, Phase::Read).bound.describe(),
            "NIC of node 0 (receive)");
  // A plan without --shared-src reads the node disks on the same cluster:
  // 20 GB through node 0's 6 GB/s disk.
  PlanBuilder owner(4, 1);
  owner.read(0, 0, 10 * GB).read(1, 0, 10 * GB);
  EXPECT_DOUBLE_EQ(estimate(owner, cluster).seconds, 20.0 / 6);
}

TEST(PlanEstimateTest, SmallerShareFinishesFirst) {
  // Node 0: rank 0 reads 2 GB, rank 1 4 GB; 6 GB at 6 GB/s = 1 s. At equal
  // shares (3 GB/s each) rank 0 is done after 2 GB / 3 GB/s = 2/3 s; rank
  // 1 has then read 2 GB and reads its last 2 GB alone at 6 GB/s in 1/3 s:
  // done at 1 s, the critical rank.
  PlanBuilder builder(2, 1);
  builder.read(0, 0, 2 * GB).read(1, 0, 4 * GB);
  PlanEstimate e = estimate(builder);
  EXPECT_DOUBLE_EQ(e.seconds, 1.0);
  EXPECT_EQ(phase(e, 0, Phase::Read).criticalRank, 1u);
  EXPECT_NEAR(e.ranks[0].busySeconds, 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(e.ranks[1].busySeconds, 1.0);
  EXPECT_EQ(e.ranks[1].criticalRounds, 1u);
  EXPECT_EQ(e.ranks[0].criticalRounds, 0u);
}

TEST(PlanEstimateTest, MessagesBetweenNodesShareTheNic) {
  // Nodes {0, 1} and {2, 3}. Ranks 0 and 1 send 25 GB each to ranks 2 and
  // 3: node 0's NIC sends 50 GB at 25 GB/s = 2 s (node 1's receives as
  // many: also 2 s; the send side is named first). Rank 0 also sends 30 GB
  // to rank 1 over NVLink: 30 / 300 = 0.1 s, not the bound.
  PlanBuilder builder(4, 1);
  builder.send(0, 2, 0, 25 * GB).send(1, 3, 0, 25 * GB);
  builder.send(0, 1, 0, 30 * GB);
  PlanEstimate e = estimate(builder);
  const PhaseEstimate &exchange = phase(e, 0, Phase::Exchange);
  EXPECT_DOUBLE_EQ(exchange.seconds, 2.0);
  EXPECT_EQ(exchange.bound.describe(), "NIC of node 0 (send)");
  EXPECT_EQ(exchange.criticalRank, 0u);
  EXPECT_DOUBLE_EQ(e.seconds, 2.0);
  // Rank 1's NVLink receive is 0.1 s; its NIC share ends at 2 s.
  EXPECT_DOUBLE_EQ(e.ranks[1].busySeconds, 2.0);
}

TEST(PlanEstimateTest, MessagesInsideANodeUseNvlink) {
  // Rank 0 sends 3 GB to rank 1 (same node) at 300 GB/s = 0.01 s.
  PlanBuilder builder(2, 1);
  builder.send(0, 1, 0, 3 * GB);
  PlanEstimate e = estimate(builder);
  EXPECT_DOUBLE_EQ(e.seconds, 0.01);
  EXPECT_EQ(phase(e, 0, Phase::Exchange).bound.describe(),
            "NVLink of rank 0 (send)");
}

TEST(PlanEstimateTest, PhasesAddUpAndRoundsAddUp) {
  // One node, two ranks.
  // Round 0: rank 0 reads 12 GB (12 / 6 = 2 s); sends 3 GB to rank 1
  // (3 / 300 = 0.01 s); rank 1 copies 4 GB (4 / 20 = 0.2 s) and writes
  // 8 GB (8 / 4 = 2 s): 2 + 0.01 + 0.2 + 2 = 4.21 s. Read and write tie at
  // 2 s; the earlier phase, read, bounds the round.
  // Round 1: ranks 0 and 1 write 2 GB each: 4 GB / 4 GB/s = 1 s.
  // Total 5.21 s.
  PlanBuilder builder(2, 2);
  builder.read(0, 0, 12 * GB).send(0, 1, 0, 3 * GB);
  builder.copy(1, 0, 4 * GB).write(1, 0, 8 * GB);
  builder.write(0, 1, 2 * GB).write(1, 1, 2 * GB);
  PlanEstimate e = estimate(builder);

  ASSERT_EQ(e.rounds.size(), 2u);
  EXPECT_DOUBLE_EQ(phase(e, 0, Phase::Read).seconds, 2.0);
  EXPECT_DOUBLE_EQ(phase(e, 0, Phase::Exchange).seconds, 0.01);
  EXPECT_DOUBLE_EQ(phase(e, 0, Phase::Copy).seconds, 0.2);
  EXPECT_EQ(phase(e, 0, Phase::Copy).bound.describe(), "copies of rank 1");
  EXPECT_DOUBLE_EQ(phase(e, 0, Phase::Write).seconds, 2.0);
  EXPECT_DOUBLE_EQ(e.rounds[0].seconds, 4.21);
  EXPECT_EQ(e.rounds[0].longest, Phase::Read);
  EXPECT_EQ(e.rounds[0].longestPhase().bound.describe(), "disk read of node 0");
  EXPECT_DOUBLE_EQ(e.rounds[1].seconds, 1.0);
  EXPECT_EQ(e.rounds[1].longestPhase().bound.describe(),
            "disk write of node 0");
  EXPECT_DOUBLE_EQ(e.seconds, 5.21);

  // Per phase over the plan: read 2, exchange 0.01, copy 0.2, write 3.
  EXPECT_DOUBLE_EQ(e.phaseSeconds[0], 2.0);
  EXPECT_DOUBLE_EQ(e.phaseSeconds[1], 0.01);
  EXPECT_DOUBLE_EQ(e.phaseSeconds[2], 0.2);
  EXPECT_DOUBLE_EQ(e.phaseSeconds[3], 3.0);
  // The critical path by bound: disk write 3 s, disk read 2 s, copies 0.2 s,
  // NVLink (send; the receive ties and comes second) 0.01 s.
  auto bound = [&](ResourceKind kind) {
    return e.boundSeconds[static_cast<size_t>(kind)];
  };
  EXPECT_DOUBLE_EQ(bound(ResourceKind::DiskWrite), 3.0);
  EXPECT_DOUBLE_EQ(bound(ResourceKind::DiskRead), 2.0);
  EXPECT_DOUBLE_EQ(bound(ResourceKind::Copy), 0.2);
  EXPECT_DOUBLE_EQ(bound(ResourceKind::NvlinkSend), 0.01);
  EXPECT_DOUBLE_EQ(bound(ResourceKind::NvlinkReceive), 0.0);

  // Ideal: node 0's disk writes 8 + 2 + 2 = 12 GB at 4 GB/s = 3 s, more
  // than its reads (12 GB at 6 GB/s = 2 s).
  EXPECT_EQ(e.ideal.resource.describe(), "disk write of node 0");
  EXPECT_EQ(e.ideal.bytes, 12 * GB);
  EXPECT_DOUBLE_EQ(e.ideal.seconds, 3.0);

  // Busy: rank 0 reads 2 s + sends 0.01 s, then writes in round 1 beside
  // rank 1 (equal shares, both done at 1 s): 3.01 s. Rank 1 receives 0.01
  // s, copies 0.2 s, writes 2 s, then 1 s: 3.21 s.
  EXPECT_NEAR(e.ranks[0].busySeconds, 3.01, 1e-12);
  EXPECT_NEAR(e.ranks[1].busySeconds, 3.21, 1e-12);
  // Rank 0 ends round 0's read and (a tie) round 1's write.
  EXPECT_EQ(e.ranks[0].criticalRounds, 2u);
  EXPECT_EQ(e.ranks[1].criticalRounds, 0u);
}

TEST(PlanEstimateTest, RanksWithoutInstructionsAreIdle) {
  // Four ranks on two nodes; only rank 3 works: it writes 4 GB on node 1
  // at 4 GB/s = 1 s.
  PlanBuilder builder(4, 1);
  builder.write(3, 0, 4 * GB);
  PlanEstimate e = estimate(builder);
  EXPECT_DOUBLE_EQ(e.seconds, 1.0);
  EXPECT_EQ(phase(e, 0, Phase::Write).bound.describe(), "disk write of node 1");
  EXPECT_EQ(phase(e, 0, Phase::Read).bound.kind, ResourceKind::None);
  EXPECT_FALSE(phase(e, 0, Phase::Read).criticalRank);
  EXPECT_DOUBLE_EQ(e.ranks[0].busySeconds, 0.0);
  EXPECT_DOUBLE_EQ(e.ranks[3].busySeconds, 1.0);
}

TEST(PlanEstimateTest, WarnsWhenARoundsBuffersExceedMemory) {
  // 1 GiB = 1073741824 B per rank: rank 0's 2 GB read buffer is over it,
  // rank 1's 1 GB is not.
  ClusterSpec cluster = testCluster();
  cluster.memoryPerRankGiB = 1;
  PlanBuilder builder(2, 1);
  builder.read(0, 0, 2 * GB).read(1, 0, 1 * GB);
  PlanEstimate e = estimate(builder, cluster);
  ASSERT_EQ(e.memoryWarnings.size(), 1u);
  EXPECT_EQ(e.memoryWarnings[0].round, 0u);
  EXPECT_EQ(e.memoryWarnings[0].rank, 0u);
  EXPECT_EQ(e.memoryWarnings[0].bufferBytes, 2 * GB);
  // Without memory_per_rank_GiB nothing is checked.
  EXPECT_TRUE(estimate(builder).memoryWarnings.empty());
}

TEST(PlanEstimateTest, EmptyPlanTakesNoTime) {
  PlanBuilder builder(2, 1);
  PlanEstimate e = estimate(builder);
  EXPECT_DOUBLE_EQ(e.seconds, 0.0);
  EXPECT_EQ(e.ideal.resource.kind, ResourceKind::None);
}

} // namespace
