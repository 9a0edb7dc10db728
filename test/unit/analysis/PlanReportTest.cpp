//===- PlanReportTest.cpp - The HTML page of a plan -----------------------===//
//
// The page is self-contained (no scripts, no network), shows the traffic
// matrix rank by rank for small plans and node by node for large ones, and
// the estimate only when there is one.
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/PlanReport.h"

#include "PlanBuilder.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace aoa;
using namespace aoa::analysis;
using aoa::test::PlanBuilder;

namespace {

std::string report(const PlanBuilder &builder, const ClusterSpec *cluster) {
  PlanTraffic traffic = computePlanTraffic(builder.plan());
  std::optional<PlanEstimate> estimate;
  PlanReportInput input;
  input.planName = "plan <1>";
  input.traffic = &traffic;
  if (cluster) {
    estimate = estimatePlan(traffic, *cluster);
    input.cluster = cluster;
    input.estimate = &*estimate;
    input.clusterName = "cluster.json";
  }
  std::ostringstream os;
  writePlanReport(input, os);
  return os.str();
}

ClusterSpec cluster(uint32_t ranksPerNode) {
  ClusterSpec spec;
  spec.ranksPerNode = ranksPerNode;
  spec.diskReadGBps = 6;
  spec.diskWriteGBps = 4;
  spec.nicGBps = 25;
  return spec;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(PlanReportTest, SmallPlanShowsRanksAndNeedsNothingFromTheNetwork) {
  PlanBuilder builder(3, 1);
  builder.read(0, 0, 1000).send(0, 1, 0, 120).send(2, 0, 0, 7);
  builder.write(1, 0, 120);
  std::string page = report(builder, nullptr);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(contains(page, "<title>aoa plan report: plan &lt;1&gt;</title>"));
  EXPECT_TRUE(contains(page, "<svg id=\"traffic-matrix\""));
  EXPECT_TRUE(contains(page, "<title>rank 0 &#8594; rank 1: 120 B</title>"));
  EXPECT_TRUE(contains(page, "<title>rank 2 &#8594; rank 0: 7 B</title>"));
  EXPECT_TRUE(contains(page, "<svg id=\"rank-bytes\""));
  EXPECT_TRUE(contains(page, "<svg id=\"round-bytes\""));
  EXPECT_FALSE(contains(page, "id=\"predicted-time\""));
  EXPECT_FALSE(contains(page, "<script"));
  EXPECT_FALSE(contains(page, "http"));
  EXPECT_FALSE(contains(page, "url("));
}

TEST(PlanReportTest, EstimateShowsItsTimeAndCriticalPath) {
  // Ranks 0 and 1 (one node) read 6 GB each at 6 GB/s shared: 2 s.
  PlanBuilder builder(2, 1);
  builder.read(0, 0, 6000000000).read(1, 0, 6000000000);
  ClusterSpec spec = cluster(8);
  std::string page = report(builder, &spec);
  EXPECT_TRUE(contains(page, "<td id=\"predicted-time\">2.000 s</td>"));
  EXPECT_TRUE(contains(page, "<svg id=\"round-time\""));
  EXPECT_TRUE(contains(page, "<table id=\"critical-path\">"));
  EXPECT_TRUE(contains(page, "<td>disk read of node 0</td><td>0</td>"));
  EXPECT_TRUE(contains(page, "No rank sends anything."));
}

TEST(PlanReportTest, LargePlanIsShownByNode) {
  // 200 ranks, 8 per node: 25 nodes. Rank 0 sends to rank 9 (node 1) and
  // rank 1 to rank 2 (inside node 0).
  PlanBuilder builder(200, 1);
  builder.send(0, 9, 0, 500).send(1, 2, 0, 30);
  ClusterSpec spec = cluster(8);
  std::string page = report(builder, &spec);
  EXPECT_TRUE(contains(page, "<title>node 0 &#8594; node 1: 500 B</title>"));
  EXPECT_TRUE(contains(page, "<title>node 0 &#8594; node 0: 30 B</title>"));
  EXPECT_TRUE(contains(page, "<td>node 24</td>"));
  EXPECT_FALSE(contains(page, "rank 199"));
}

} // namespace
