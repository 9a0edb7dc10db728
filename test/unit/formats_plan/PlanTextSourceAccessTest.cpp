//===- PlanTextSourceAccessTest.cpp - Shared source access ----------------===//
//
// `source-access shared` (aoa-compile --shared-src): it round trips, only
// it is written (other plans keep their text), it lets a rank read another
// rank's source file where the default refuses that, and its syntax errors
// are located.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanWriter.h"

#include "PlanTextTestSupport.h"

#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::test;

namespace {

const std::string kBudgetLine = "memory-budget 1048576\n";

std::string sharedSample() {
  return edit(sampleText(), kBudgetLine,
              kBudgetLine + "source-access shared\n");
}

TEST(PlanTextSourceAccessTest, RoundTrips) {
  Read shared(sharedSample());
  ASSERT_TRUE(shared.plan) << shared.all();
  EXPECT_EQ(shared.plan->sourceAccess, plan::SourceAccess::Shared);
  EXPECT_EQ(printPlanText(*shared.plan), sharedSample());
  // The default is not written, so plans without the option keep their
  // text, and an explicit 'owner' reads as the default.
  Read owner(sampleText());
  ASSERT_TRUE(owner.plan) << owner.all();
  EXPECT_EQ(owner.plan->sourceAccess, plan::SourceAccess::Owner);
  EXPECT_EQ(printPlanText(*owner.plan).find("source-access"),
            std::string::npos);
  Read explicitOwner(
      edit(sampleText(), kBudgetLine, kBudgetLine + "source-access owner\n"));
  ASSERT_TRUE(explicitOwner.plan) << explicitOwner.all();
  EXPECT_EQ(difference(*explicitOwner.plan, *owner.plan), "");
}

// Rank 0 reads source tensors 0 and 3 of file 0; given to rank 1, the file
// is another rank's. Refused by default, read with shared access.
TEST(PlanTextSourceAccessTest, AnyRankReadsAnySourceFileOnlyWhenShared) {
  const std::string from = "source-file 0 rank 0";
  const std::string to = "source-file 0 rank 1";
  expectEditError(from, to, "0 [0:4, 0:4]",
                  "rank 0 reads source tensor 0, but its file "
                  "'src/rank0.safetensors' belongs to rank 1");
  Read shared(edit(sharedSample(), from, to));
  EXPECT_TRUE(shared.plan) << shared.all();
  // Destination files stay their rank's alone.
  expectError(edit(sharedSample(), "destination-file 0 rank 0",
                   "destination-file 0 rank 1"),
              "0 [0:4, 0:4] %4", "but its file");
}

TEST(PlanTextSourceAccessTest, SyntaxErrors) {
  expectError(
      edit(sampleText(), kBudgetLine, kBudgetLine + "source-access everyone\n"),
      "everyone", "unknown source access 'everyone'");
  expectError(edit(sampleText(), kBudgetLine, kBudgetLine + "source-access\n"),
              "\nsource-file",
              "expected the source access ('shared' or 'owner'), found the "
              "end of the line");
  expectError(edit(sharedSample(), "source-access shared\n",
                   "source-access shared\nsource-access shared\n"),
              "source-access", "'source-access' is given twice",
              /*occurrence=*/1);
  expectError(edit(sampleText(),
                   "source-file 1 rank 1 \"src/rank1.safetensors\"\n",
                   "source-file 1 rank 1 \"src/rank1.safetensors\"\n"
                   "source-access shared\n"),
              "source-access",
              "'source-access' lines must come before the 'source-file' "
              "lines");
  std::string version2 = edit(sharedSample(), "aoa-plan 3", "aoa-plan 2");
  expectError(version2, "source-access",
              "'source-access' lines need plan format version 3, but this "
              "plan is version 2");
}

} // namespace
