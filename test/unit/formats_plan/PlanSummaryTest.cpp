//===- PlanSummaryTest.cpp - The plan cost summary ------------------------===//
//
// The summary of a plan: byte sizes, the per-rank table, idle ranks.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanSummary.h"

#include "PlanTextTestSupport.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace aoa;
using namespace aoa::test;

namespace {

TEST(PlanSummaryTest, ByteSizes) {
  EXPECT_EQ(formatByteSize(0), "0 B");
  EXPECT_EQ(formatByteSize(1023), "1023 B");
  EXPECT_EQ(formatByteSize(1536), "1.50 KiB");
  EXPECT_EQ(formatByteSize(int64_t(3) << 30), "3.00 GiB");
}

TEST(PlanSummaryTest, Table) {
  plan::Plan p = samplePlan();
  // Rank 0 holds 320 bytes of buffers in round 0, rank 1 at most 256.
  p.memoryBudget = 300;
  std::ostringstream os;
  printPlanSummary(p, os, 4096);
  EXPECT_EQ(os.str(),
            "plan: 2 ranks, 2 rounds, 20 instructions\n"
            "files: 2 source files (6 tensors), 4 destination files (5 "
            "tensors), 2 added keys\n"
            "memory budget: 300 B of buffers per rank\n"
            "\n"
            "rank   instructions   read   sent  received  written  "
            "peak buffers\n"
            "0                 9   96 B   64 B      96 B    192 B       "
            "320 B !\n"
            "1                11  192 B   96 B      64 B    160 B         "
            "256 B\n"
            "total            20  288 B  160 B     160 B    352 B     "
            "max 320 B\n"
            "\n"
            "! the peak buffer memory of rank 0 exceeds the memory budget of "
            "300 B: a transfer that cannot be split is larger than the "
            "budget\n"
            "\n"
            "network: this plan sends 160 B between ranks; a "
            "broadcast-everything approach would move 4096 bytes (4.00 KiB), "
            "25.6x as much\n");
}

TEST(PlanSummaryTest, IdleRanksHaveNoRow) {
  // Rank ids may be sparse (issue 20 C2): a plan of ranks 0 and 2^24-1
  // printed a row for each of the 2^24 ranks. Idle ranks are one line.
  plan::Plan p = samplePlan();
  p.ranks = 6;
  p.programs.resize(6);
  std::swap(p.programs[1], p.programs[4]);
  std::ostringstream os;
  printPlanSummary(p, os, -1);
  std::string text = os.str();
  EXPECT_NE(text.find("\n0                 9"), std::string::npos) << text;
  EXPECT_NE(text.find("\n4                11"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n1 "), std::string::npos) << text;
  EXPECT_NE(text.find("max 320 B\nidle (no instructions): 4 ranks (1-3, 5)\n"),
            std::string::npos)
      << text;
}

// A plan compiled with --shared-src says so under the files (what a run
// needs); other plans' summaries are unchanged.
TEST(PlanSummaryTest, SharedSourceAccessIsNamed) {
  plan::Plan p = samplePlan();
  std::ostringstream owner;
  printPlanSummary(p, owner, -1);
  EXPECT_EQ(owner.str().find("source access"), std::string::npos);
  p.sourceAccess = plan::SourceAccess::Shared;
  std::ostringstream shared;
  printPlanSummary(p, shared, -1);
  EXPECT_NE(shared.str().find(
                "2 added keys\nsource access: shared (each rank reads what it "
                "writes from any source file; every rank must see every "
                "source file, so not aoa-run --node-local)\nmemory budget: "),
            std::string::npos)
      << shared.str();
}

TEST(PlanSummaryTest, LargeSizesShowExactBytes) {
  plan::Plan p;
  p.ranks = 1;
  p.programs.resize(1);
  p.memoryBudget = int64_t(1) << 30;
  std::ostringstream os;
  printPlanSummary(p, os, -1);
  EXPECT_NE(os.str().find("memory budget: 1.00 GiB (1073741824 B) of buffers "
                          "per rank\n"),
            std::string::npos)
      << os.str();
  EXPECT_EQ(os.str().find("network"), std::string::npos);
}

} // namespace
