//===- RunPlanReadingTest.cpp - How a job's processes read the plan ------===//
//
// Every rank of a job runs as a thread (ThreadRankGroup.h) and reads the
// plan as aoa-run's processes do (readJobPlan): each its own section of a
// binary plan, or the whole of a text plan. The checks no process can make
// alone must refuse, on every rank, a plan whose ranks have different round
// counts or unpaired messages (written here with the binary writer, which
// does not verify) and processes that read different plans; a damaged
// section is reported by its own rank only.
//
//===----------------------------------------------------------------------===//
#include "RunPlanReading.h"

#include "CapturedDiagnostics.h"
#include "SamplePlan.h"
#include "SamplePlanText.h"
#include "ScratchDirectory.h"
#include "ThreadRankGroup.h"

#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/formats/plan/PlanReader.h"
#include "aoa/formats/plan/PlanWriter.h"

#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <sstream>

namespace aoa {
namespace {

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// What each rank got from readJobPlan, and what it printed.
struct RankOutcome {
  std::optional<JobPlan> job;
  std::string printed;
};

/// Runs readJobPlan on `ranks` threads; rank r reads `paths[r]` (or
/// paths[0] for all when one path is given).
std::vector<RankOutcome> readOnRanks(uint32_t ranks,
                                     const std::vector<std::string> &paths) {
  std::vector<RankOutcome> outcomes(ranks);
  test::runRanksAsThreads(ranks, [&](uint32_t r, runtime::RankGroup &group) {
    RunCommand command;
    command.planPath = paths.size() == 1 ? paths[0] : paths[r];
    std::ostringstream err;
    outcomes[r].job = readJobPlan(command, group, err);
    outcomes[r].printed = err.str();
  });
  return outcomes;
}

TEST(RunPlanReadingTest, EachRankReadsItsOwnSectionOfABinaryPlan) {
  test::ScratchDirectory dir;
  plan::Plan plan = test::readSamplePlan();
  std::string path = dir.file("p.bin");
  writeFile(path, binplan::encodeBinaryPlan(plan, {1, 2}));
  std::vector<RankOutcome> outcomes = readOnRanks(2, {path});
  for (uint32_t r = 0; r < 2; ++r) {
    ASSERT_TRUE(outcomes[r].job) << outcomes[r].printed;
    EXPECT_EQ(outcomes[r].printed, "");
    const plan::Plan &own = outcomes[r].job->plan;
    EXPECT_EQ(own.onlyRank, std::optional<uint32_t>(r));
    EXPECT_EQ(own.programs[r].rounds.size(), 2u);
    EXPECT_TRUE(own.programs[1 - r].rounds.empty());
    EXPECT_EQ(outcomes[r].job->origin, (binplan::PlanOrigin{1, 2}));
  }
  EXPECT_EQ(outcomes[0].job->fingerprint, outcomes[1].job->fingerprint);
}

TEST(RunPlanReadingTest, RankZerosBytesReachARankThatCannotOpenThePlan) {
  // Rank 1 has no such file (the plan is on rank 0's node only): rank 0
  // broadcasts the bytes, and rank 1 still decodes only its own section.
  test::ScratchDirectory dir;
  std::string path = dir.file("p.bin");
  writeFile(path, binplan::encodeBinaryPlan(test::readSamplePlan(), {1, 2}));
  std::vector<RankOutcome> outcomes =
      readOnRanks(2, {path, dir.file("missing.bin")});
  for (uint32_t r = 0; r < 2; ++r) {
    ASSERT_TRUE(outcomes[r].job) << outcomes[r].printed;
    EXPECT_EQ(outcomes[r].job->plan.onlyRank, std::optional<uint32_t>(r));
    EXPECT_TRUE(outcomes[r].job->plan.programs[1 - r].rounds.empty());
  }
  EXPECT_EQ(outcomes[0].job->fingerprint, outcomes[1].job->fingerprint);
}

TEST(RunPlanReadingTest, ATextPlanIsReadWholeByEveryRank) {
  test::ScratchDirectory dir;
  std::string path = dir.file("p.txt");
  writeFile(path, test::kSamplePlanText);
  std::vector<RankOutcome> outcomes = readOnRanks(2, {path});
  for (const RankOutcome &outcome : outcomes) {
    ASSERT_TRUE(outcome.job) << outcome.printed;
    EXPECT_FALSE(outcome.job->plan.onlyRank);
    EXPECT_EQ(outcome.job->plan.programs[0].rounds.size(), 2u);
    EXPECT_EQ(outcome.job->plan.programs[1].rounds.size(), 2u);
  }
}

TEST(RunPlanReadingTest, UnpairedMessagesAreRefusedOnEveryRank) {
  test::ScratchDirectory dir;
  plan::Plan plan = test::readSamplePlan();
  // Rank 0 no longer receives rank 1's message: the buffers it brought are
  // then undefined, which rank 0's own check finds (and reports alone).
  std::vector<plan::Instruction> &list =
      plan.programs[0].rounds[0].instructions;
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].opcode == plan::Opcode::Recv) {
      list.erase(list.begin() + long(i));
      break;
    }
  std::string path = dir.file("p.bin");
  writeFile(path, binplan::encodeBinaryPlan(plan, {}));
  std::vector<RankOutcome> outcomes = readOnRanks(2, {path});
  EXPECT_FALSE(outcomes[0].job);
  EXPECT_FALSE(outcomes[1].job);
  EXPECT_NE(outcomes[0].printed.find("rank 0, round 0"), std::string::npos)
      << outcomes[0].printed;
  EXPECT_EQ(outcomes[1].printed, "");

  // Rank 0 sends its message twice: every rank is sound alone, and only the
  // processes together see the send without a recv.
  plan::Plan extra = test::readSamplePlan();
  std::vector<plan::Instruction> &round =
      extra.programs[0].rounds[0].instructions;
  for (size_t i = 0; i < round.size(); ++i)
    if (round[i].opcode == plan::Opcode::Send) {
      plan::Instruction send = round[i];
      round.insert(round.begin() + long(i), send);
      break;
    }
  writeFile(path, binplan::encodeBinaryPlan(extra, {}));
  outcomes = readOnRanks(2, {path});
  EXPECT_FALSE(outcomes[0].job);
  EXPECT_FALSE(outcomes[1].job);
  EXPECT_NE(outcomes[0].printed.find("do not pair up across ranks"),
            std::string::npos)
      << outcomes[0].printed;
  EXPECT_EQ(outcomes[1].printed, ""); // rank 0 reports for all
}

TEST(RunPlanReadingTest, DifferentRoundCountsAreRefused) {
  test::ScratchDirectory dir;
  plan::Plan plan = test::readSamplePlan();
  plan.programs[1].rounds.emplace_back();
  std::string path = dir.file("p.bin");
  writeFile(path, binplan::encodeBinaryPlan(plan, {}));
  std::vector<RankOutcome> outcomes = readOnRanks(2, {path});
  EXPECT_FALSE(outcomes[0].job);
  EXPECT_FALSE(outcomes[1].job);
  EXPECT_NE(outcomes[0].printed.find("disagree on the number of rounds (from "
                                     "2 to 3)"),
            std::string::npos)
      << outcomes[0].printed;
}

TEST(RunPlanReadingTest, ProcessesThatReadDifferentPlansAreRefused) {
  test::ScratchDirectory dir;
  plan::Plan plan = test::readSamplePlan();
  writeFile(dir.file("a.bin"), binplan::encodeBinaryPlan(plan, {1, 2}));
  writeFile(dir.file("b.bin"), binplan::encodeBinaryPlan(plan, {1, 3}));
  std::vector<RankOutcome> outcomes =
      readOnRanks(2, {dir.file("a.bin"), dir.file("b.bin")});
  EXPECT_FALSE(outcomes[0].job);
  EXPECT_FALSE(outcomes[1].job);
  EXPECT_NE(outcomes[0].printed.find("the processes read different plans"),
            std::string::npos)
      << outcomes[0].printed;
}

TEST(RunPlanReadingTest, ADamagedSectionIsReportedByItsRankAlone) {
  test::ScratchDirectory dir;
  std::string bytes = binplan::encodeBinaryPlan(test::readSamplePlan(), {});
  // Rank 1's section is the last: damage its last byte.
  bytes[bytes.size() - 1] ^= 0x5a;
  std::string path = dir.file("p.bin");
  writeFile(path, bytes);
  std::vector<RankOutcome> outcomes = readOnRanks(2, {path});
  EXPECT_FALSE(outcomes[0].job);
  EXPECT_FALSE(outcomes[1].job);
  EXPECT_EQ(outcomes[0].printed, "");
  EXPECT_NE(outcomes[1].printed.find("rank 1's section's checksum does not "
                                     "match"),
            std::string::npos)
      << outcomes[1].printed;
}

TEST(RunPlanReadingTest, AJobLargerThanThePlanReachesTheJobCheck) {
  // A third process reads the tables only; the run's own check then
  // refuses the job on every process with the launcher's words.
  test::ScratchDirectory dir;
  std::string path = dir.file("p.bin");
  writeFile(path, binplan::encodeBinaryPlan(test::readSamplePlan(), {}));
  std::vector<RankOutcome> outcomes = readOnRanks(3, {path});
  for (const RankOutcome &outcome : outcomes) {
    ASSERT_TRUE(outcome.job) << outcome.printed;
    EXPECT_EQ(outcome.job->plan.ranks, 2u);
  }
  EXPECT_TRUE(outcomes[2].job->plan.programs[0].rounds.empty());
  EXPECT_TRUE(outcomes[2].job->plan.programs[1].rounds.empty());
}

} // namespace
} // namespace aoa
