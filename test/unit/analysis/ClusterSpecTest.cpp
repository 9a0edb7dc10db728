//===- ClusterSpecTest.cpp - Reading a cluster description ----------------===//
//
// A valid spec, the defaults of its optional keys, and each diagnostic: its
// place (line:col of the offending key or value), its text and its hint.
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/ClusterSpec.h"

#include "CapturedDiagnostics.h"

#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::analysis;

namespace {

std::optional<ClusterSpec> load(test::CapturedDiagnostics &captured,
                                const std::string &text) {
  return loadClusterSpecText("cluster.json", text, captured.sources,
                             captured.diags);
}

TEST(ClusterSpecTest, ReadsEveryKey) {
  test::CapturedDiagnostics captured;
  std::optional<ClusterSpec> spec =
      load(captured, R"({"ranks_per_node": 8, "disk_read_GBps": 6.0,
 "disk_write_GBps": 4.0, "nic_GBps": 25.0, "nvlink_GBps": 300.0,
 "memory_per_rank_GiB": 80, "copy_GBps": 20.5})");
  ASSERT_TRUE(spec) << captured.all();
  EXPECT_EQ(spec->ranksPerNode, 8u);
  EXPECT_EQ(spec->diskReadGBps, 6.0);
  EXPECT_EQ(spec->diskWriteGBps, 4.0);
  EXPECT_EQ(spec->nicGBps, 25.0);
  EXPECT_EQ(spec->nvlinkGBps, 300.0);
  EXPECT_EQ(spec->copyGBps, 20.5);
  ASSERT_TRUE(spec->memoryPerRankGiB);
  EXPECT_EQ(*spec->memoryPerRankGiB, 80.0);
  EXPECT_EQ(spec->nodeOf(15), 1u);
  EXPECT_EQ(spec->nodesFor(17), 3u);
}

TEST(ClusterSpecTest, OptionalKeysHaveDefaults) {
  test::CapturedDiagnostics captured;
  std::optional<ClusterSpec> spec =
      load(captured, R"({"ranks_per_node": 4, "disk_read_GBps": 2,
 "disk_write_GBps": 1, "nic_GBps": 12.5})");
  ASSERT_TRUE(spec) << captured.all();
  EXPECT_EQ(spec->nvlinkGBps, 300.0);
  EXPECT_EQ(spec->copyGBps, 20.0);
  EXPECT_FALSE(spec->memoryPerRankGiB);
}

TEST(ClusterSpecTest, ReportsEveryProblemAtItsPlace) {
  test::CapturedDiagnostics captured;
  std::optional<ClusterSpec> spec = load(captured, R"({
  "ranks_per_node": 8.5,
  "disk_read_GBps": "6",
  "disk_write_GBps": 0,
  "nic_GBps": -25,
  "nvlink_GBs": 300
})");
  EXPECT_FALSE(spec);
  ASSERT_EQ(captured.diagnostics.size(), 5u) << captured.all();
  // Unknown keys first, in file order, then each key in the spec's order.
  EXPECT_EQ(captured.where(0), "cluster.json:6:3");
  EXPECT_EQ(captured.message(0), "unknown key 'nvlink_GBs' in cluster spec");
  EXPECT_EQ(captured.hints(0), "did you mean 'nvlink_GBps'?\n");
  EXPECT_EQ(captured.where(1), "cluster.json:2:21");
  EXPECT_EQ(captured.message(1),
            "'ranks_per_node' must be an integer, not the number 8.5");
  EXPECT_EQ(captured.hints(1),
            "ranks_per_node: ranks (GPUs) per node, an integer\n");
  EXPECT_EQ(captured.where(2), "cluster.json:3:21");
  EXPECT_EQ(captured.message(2),
            "'disk_read_GBps' must be a number, not a string");
  EXPECT_EQ(captured.where(3), "cluster.json:4:22");
  EXPECT_EQ(captured.message(3), "'disk_write_GBps' must be positive, not 0");
  EXPECT_EQ(captured.hints(3),
            "disk_write_GBps: a node's disk write bandwidth, decimal GB/s, "
            "shared by its ranks\n");
  EXPECT_EQ(captured.where(4), "cluster.json:5:15");
  EXPECT_EQ(captured.message(4), "'nic_GBps' must be positive, not -25");
}

TEST(ClusterSpecTest, MissingRequiredKeysPointAtTheObject) {
  test::CapturedDiagnostics captured;
  EXPECT_FALSE(load(captured, "  {\"ranks_per_node\": 8}"));
  ASSERT_EQ(captured.diagnostics.size(), 3u) << captured.all();
  EXPECT_EQ(captured.where(0), "cluster.json:1:3");
  EXPECT_EQ(captured.message(0), "the cluster spec has no 'disk_read_GBps'");
  EXPECT_EQ(captured.hints(0),
            "give \"disk_read_GBps\": a node's disk read bandwidth, decimal "
            "GB/s, shared by its ranks\n");
  EXPECT_EQ(captured.message(1), "the cluster spec has no 'disk_write_GBps'");
  EXPECT_EQ(captured.message(2), "the cluster spec has no 'nic_GBps'");
}

TEST(ClusterSpecTest, UnknownKeyWithoutNearSpellingListsTheKeys) {
  test::CapturedDiagnostics captured;
  EXPECT_FALSE(load(captured,
                    R"({"ranks_per_node": 8, "disk_read_GBps": 6,
 "disk_write_GBps": 4, "nic_GBps": 25, "gpus": 8})"));
  ASSERT_EQ(captured.diagnostics.size(), 1u) << captured.all();
  EXPECT_EQ(captured.where(0), "cluster.json:2:40");
  EXPECT_EQ(captured.message(0), "unknown key 'gpus' in cluster spec");
  EXPECT_EQ(captured.hints(0),
            "the keys are ranks_per_node, disk_read_GBps, disk_write_GBps, "
            "nic_GBps, nvlink_GBps, copy_GBps, memory_per_rank_GiB, "
            "shared_fs_read_GBps\n");
}

TEST(ClusterSpecTest, MalformedJsonNotAnObjectAndDuplicateKeys) {
  {
    test::CapturedDiagnostics captured;
    EXPECT_FALSE(load(captured, "{\"ranks_per_node\": 8,\n}"));
    ASSERT_EQ(captured.diagnostics.size(), 1u);
    EXPECT_EQ(captured.where(0), "cluster.json:2:1");
    EXPECT_EQ(captured.message(0).rfind("malformed JSON in cluster spec: ", 0),
              0u)
        << captured.message(0);
  }
  {
    test::CapturedDiagnostics captured;
    EXPECT_FALSE(load(captured, "[8]"));
    ASSERT_EQ(captured.diagnostics.size(), 1u);
    EXPECT_EQ(captured.where(0), "cluster.json:1:1");
    EXPECT_EQ(captured.message(0),
              "a cluster spec must be a JSON object, not a list");
  }
  {
    test::CapturedDiagnostics captured;
    EXPECT_FALSE(load(captured, "{\"nic_GBps\": 25,\n \"nic_GBps\": 50}"));
    ASSERT_EQ(captured.diagnostics.size(), 1u);
    EXPECT_EQ(captured.where(0), "cluster.json:2:2");
    EXPECT_EQ(captured.message(0),
              "key 'nic_GBps' appears twice in one object");
    EXPECT_EQ(captured.hints(0), "give each key once\n");
  }
}

TEST(ClusterSpecTest, UnreadableFile) {
  test::CapturedDiagnostics captured;
  EXPECT_FALSE(loadClusterSpec("/nonexistent/cluster.json", captured.sources,
                               captured.diags));
  ASSERT_EQ(captured.diagnostics.size(), 1u);
  EXPECT_EQ(captured.message(0).rfind(
                "cannot read cluster spec '/nonexistent/cluster.json': ", 0),
            0u)
      << captured.message(0);
}

} // namespace
