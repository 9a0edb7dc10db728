//===- LocalExecutorTest.cpp - Executing plans with the local backend -----===//
//
// Runs docs/plan-format.md's example plan (transpose + cast across ranks,
// flat ranges on both sides moving in one grouped message, a reshape and a
// flatten) on real safetensors files and checks every destination byte
// against values computed here, element by element; that file-to-file
// copies of unchanged runs give the buffered path's bytes; then resumption, the
// checks made before any byte moves, and that a failed run leaves the
// destination directory without a checkpoint.
//
//===----------------------------------------------------------------------===//
#include "CapturedDiagnostics.h"
#include "SampleCheckpoint.h"
#include "SamplePlanText.h"
#include "ScratchDirectory.h"

#include "aoa/formats/metadata/MetadataLoader.h"
#include "aoa/formats/plan/PlanReader.h"
#include "aoa/runtime/backends/LocalBackend.h"
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/transforms/FloatConversion.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

namespace aoa {
namespace {

using runtime::Expected;
using runtime::RunOptions;
using runtime::RunReport;

const char *const kPlan = test::kSamplePlanText;

class LocalExecutorTest : public ::testing::Test {
protected:
  void SetUp() override { test::writeSampleSources(scratch.file("in")); }

  std::optional<plan::Plan> readPlan(const std::string &text) {
    planText = text;
    return readPlanText("sample.plan", planText, captured.sources,
                        captured.diags);
  }

  RunOptions options(const std::string &destination) {
    RunOptions o;
    o.sourceDirectory = scratch.file("in");
    o.destinationDirectory = scratch.file(destination);
    o.threads = 3;
    o.planFingerprint = runtime::contentHash(planText.data(), planText.size());
    return o;
  }

  /// Every destination tensor holds exactly the expected values.
  void expectConverted(const std::string &destination) {
    test::expectSampleDestination(scratch.file(destination));
  }

  /// The names in a directory, recursively, relative to it.
  std::set<std::string> listing(const std::string &directory) {
    std::set<std::string> names;
    std::filesystem::path root = scratch.file(directory);
    if (!std::filesystem::exists(root))
      return names;
    for (auto &entry : std::filesystem::recursive_directory_iterator(root))
      names.insert(std::filesystem::relative(entry.path(), root).string());
    return names;
  }

  test::ScratchDirectory scratch;
  test::CapturedDiagnostics captured;
  std::string planText;
};

TEST_F(LocalExecutorTest, ConvertsTheDocumentedSampleExactly) {
  std::optional<plan::Plan> plan = readPlan(kPlan);
  ASSERT_TRUE(plan) << captured.all();
  Expected<RunReport> report = runtime::runPlanLocally(*plan, options("out"));
  ASSERT_TRUE(report.ok()) << report.error().toString();
  expectConverted("out");
  EXPECT_EQ(report->filesWritten, 4u);
  EXPECT_EQ(report->filesResumed, 0u);
  // w (2 x 32 B), the moment halves (2 x 64 B), q and kc (2 x 48 B).
  EXPECT_EQ(report->bytesRead, 64u + 128u + 96u);
  EXPECT_EQ(report->bytesWritten, 128u + 128u + 96u);
  // Rank 1 sends w's half and a moment half, rank 0 a moment half.
  EXPECT_EQ(report->bytesExchanged, 32u + 64u + 64u);
  EXPECT_EQ(listing("out"),
            (std::set<std::string>{"metadata.json", "model-00001.safetensors",
                                   "model-00002.safetensors",
                                   "opt-rank0.safetensors",
                                   "opt-rank1.safetensors"}));

  // metadata.json describes the layout, with the hash of each stored tensor.
  std::optional<ShardMetadata> metadata =
      loadShardMetadata(scratch.file("out/metadata.json"), captured.sources,
                        captured.diags);
  ASSERT_TRUE(metadata) << captured.all();
  EXPECT_EQ(metadata->tensorCount(), 4u); // wt, m.moment1_0, qc, kf
  std::optional<TensorRef> moment = metadata->find("m.moment1_0");
  ASSERT_TRUE(moment);
  ASSERT_EQ(moment->shardCount(), 2u);
  for (ShardRef shard : moment->shards()) {
    std::vector<float> values = test::expectedDestination()[{
        std::string(shard.file()), std::string(shard.name())}];
    ASSERT_EQ(values.size(), 16u);
    ASSERT_TRUE(shard.contentHash());
    EXPECT_EQ(*shard.contentHash(),
              runtime::contentHash(values.data(), values.size() * 4));
    EXPECT_EQ(shard.rank(), shard.file() == "opt-rank0.safetensors" ? 0u : 1u);
  }
}

TEST_F(LocalExecutorTest, ResultsDoNotDependOnTheThreadCount) {
  std::optional<plan::Plan> plan = readPlan(kPlan);
  ASSERT_TRUE(plan);
  for (unsigned threads : {1u, 2u, 8u}) {
    std::string out = "out" + std::to_string(threads);
    RunOptions o = options(out);
    o.threads = threads;
    o.verify = true;
    Expected<RunReport> report = runtime::runPlanLocally(*plan, o);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_TRUE(report->verified);
    expectConverted(out);
  }
}

TEST_F(LocalExecutorTest, AnInterruptedRunResumesWithoutRedoingFinishedFiles) {
  std::optional<plan::Plan> plan = readPlan(kPlan);
  ASSERT_TRUE(plan);
  RunOptions o = options("out");
  o.threads = 1;
  o.stopAfterFiles = 1;
  Expected<RunReport> interrupted = runtime::runPlanLocally(*plan, o);
  ASSERT_FALSE(interrupted.ok());
  EXPECT_NE(interrupted.error().message.find("stopped after 1"),
            std::string::npos);
  // No checkpoint yet: only the staging directory, with one finished file.
  std::set<std::string> staged = listing("out");
  EXPECT_FALSE(staged.count("metadata.json"));
  size_t finished = 0;
  for (const std::string &name : staged) {
    EXPECT_EQ(name.rfind(".aoa-run", 0), 0u) << name;
    finished += name.size() > 12 && name.substr(name.size() - 12) == ".safetensors";
  }
  EXPECT_EQ(finished, 1u);

  o.stopAfterFiles = 0;
  Expected<RunReport> resumed = runtime::runPlanLocally(*plan, o);
  ASSERT_TRUE(resumed.ok()) << resumed.error().toString();
  EXPECT_EQ(resumed->filesResumed, 1u);
  EXPECT_EQ(resumed->filesWritten, 3u);
  EXPECT_LT(resumed->bytesWritten, 128u + 128u + 96u);
  expectConverted("out");
  EXPECT_FALSE(listing("out").count(".aoa-run"));
}

/// Every file under `directory` (recursively) and its bytes.
std::map<std::string, std::string> contents(const std::string &directory) {
  std::map<std::string, std::string> files;
  for (auto &entry : std::filesystem::recursive_directory_iterator(directory)) {
    if (!entry.is_regular_file())
      continue;
    std::ifstream in(entry.path(), std::ios::binary);
    files[std::filesystem::relative(entry.path(), directory).string()] =
        std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

/// One rank: q's halves written in reverse order (neither hashed as
/// written), kc in two in-order halves, and a read feeding two writes
/// (never copied file to file).
const char *const kOneRankPlan = R"(aoa-plan 2
ranks 1
memory-budget 1048576
source-file 0 rank 0 "src/rank1.safetensors"
destination-file 0 rank 0 "one.safetensors"
source-tensor 0 file 0 name "q" key "q" float32[6, 2] box [0:6, 0:2]
source-tensor 1 file 0 name "kc" key "kc" float32[2, 2, 3] box [0:2, 0:2, 0:3]
destination-tensor 0 file 0 name "q" key "q" float32[6, 2] box [0:6, 0:2]
destination-tensor 1 file 0 name "kc" key "kc" float32[2, 2, 3] box [0:2, 0:2, 0:3]
destination-tensor 2 file 0 name "q2" key "q2" float32[2, 2] box [0:2, 0:2]
destination-tensor 3 file 0 name "q3" key "q3" float32[2, 2] box [0:2, 0:2]
rank 0
  round 0
    %0 = read src 0 [3:6, 0:2] : float32[3, 2]
    %1 = read src 0 [0:3, 0:2] : float32[3, 2]
    %2 = read src 1 [0:1, 0:2, 0:3] : float32[1, 2, 3]
    %3 = read src 1 [1:2, 0:2, 0:3] : float32[1, 2, 3]
    write dst 0 [3:6, 0:2] %0
    write dst 0 [0:3, 0:2] %1
    write dst 1 [0:1, 0:2, 0:3] %2
    write dst 1 [1:2, 0:2, 0:3] %3
  round 1
    %0 = read src 0 [0:2, 0:2] : float32[2, 2]
    write dst 2 [0:2, 0:2] %0
    write dst 3 [0:2, 0:2] %0
)";

TEST_F(LocalExecutorTest, DirectCopiesGiveTheBufferedPathsBytes) {
  // The sample moves both flat moment halves between ranks unchanged, one
  // alone and one beside w's half in a two-buffer message.
  for (auto [name, text, direct] :
       {std::make_tuple("sample", kPlan, uint64_t(64 + 64)),
        std::make_tuple("one-rank", kOneRankPlan, uint64_t(48 + 48))}) {
    SCOPED_TRACE(name);
    std::optional<plan::Plan> plan = readPlan(text);
    ASSERT_TRUE(plan) << captured.all();
    std::string fast = std::string(name) + "-direct";
    std::string slow = std::string(name) + "-buffered";
    for (unsigned threads : {1u, 3u}) {
      RunOptions o = options(fast);
      o.threads = threads;
      o.overwrite = true;
      o.verify = true;
      Expected<RunReport> copied = runtime::runPlanLocally(*plan, o);
      ASSERT_TRUE(copied.ok()) << copied.error().toString();
      EXPECT_EQ(copied->bytesCopiedDirectly, direct);
      o = options(slow);
      o.threads = threads;
      o.overwrite = true;
      o.verify = true;
      o.directCopy = false;
      Expected<RunReport> buffered = runtime::runPlanLocally(*plan, o);
      ASSERT_TRUE(buffered.ok()) << buffered.error().toString();
      EXPECT_EQ(buffered->bytesCopiedDirectly, 0u);
      EXPECT_EQ(copied->bytesRead, buffered->bytesRead);
      EXPECT_EQ(copied->bytesWritten, buffered->bytesWritten);
      EXPECT_EQ(copied->bytesExchanged, buffered->bytesExchanged);
      // metadata.json included: the hashes agree too.
      std::map<std::string, std::string> a = contents(scratch.file(fast));
      EXPECT_EQ(a, contents(scratch.file(slow)));
      EXPECT_TRUE(a.count("metadata.json"));
    }
  }
  expectConverted("sample-direct");
}

TEST_F(LocalExecutorTest, DirectCopiesResumeLikeTheBufferedPath) {
  std::optional<plan::Plan> plan = readPlan(kPlan);
  ASSERT_TRUE(plan);
  for (bool direct : {true, false}) {
    for (uint32_t stop : {1u, 2u, 3u}) {
      std::string out = "out-" + std::to_string(direct) + std::to_string(stop);
      RunOptions o = options(out);
      o.threads = 1;
      o.directCopy = direct;
      o.stopAfterFiles = stop;
      ASSERT_FALSE(runtime::runPlanLocally(*plan, o).ok());
      o.stopAfterFiles = 0;
      Expected<RunReport> resumed = runtime::runPlanLocally(*plan, o);
      ASSERT_TRUE(resumed.ok()) << resumed.error().toString();
      EXPECT_EQ(resumed->filesResumed, stop);
      expectConverted(out);
      EXPECT_EQ(contents(scratch.file(out)),
                contents(scratch.file("out-1" + std::to_string(stop))));
    }
  }
}

TEST_F(LocalExecutorTest, AJournalOfAnotherPlanIsRefusedUnlessRestarting) {
  std::optional<plan::Plan> plan = readPlan(kPlan);
  ASSERT_TRUE(plan);
  RunOptions o = options("out");
  o.stopAfterFiles = 1;
  ASSERT_FALSE(runtime::runPlanLocally(*plan, o).ok());
  o.stopAfterFiles = 0;
  o.planFingerprint ^= 1;
  Expected<RunReport> other = runtime::runPlanLocally(*plan, o);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("belongs to another plan"),
            std::string::npos)
      << other.error().message;
  o.restart = true;
  Expected<RunReport> restarted = runtime::runPlanLocally(*plan, o);
  ASSERT_TRUE(restarted.ok()) << restarted.error().toString();
  EXPECT_EQ(restarted->filesResumed, 0u);
  expectConverted("out");
}

TEST_F(LocalExecutorTest, SourceProblemsAreFoundBeforeAnythingIsWritten) {
  std::optional<plan::Plan> plan = readPlan(kPlan);
  ASSERT_TRUE(plan);
  // A tensor of the wrong dtype, and a missing file.
  test::writeFile(scratch.file("in/src/rank0.safetensors"),
            {{"w", DType::F32, {4, 4}, std::vector<uint8_t>(64)},
             {"m.moment1_0", DType::F32, {16}, std::vector<uint8_t>(64)}});
  std::filesystem::remove(scratch.file("in/src/rank1.safetensors"));
  Expected<RunReport> report = runtime::runPlanLocally(*plan, options("out"));
  ASSERT_FALSE(report.ok());
  const std::string &message = report.error().message;
  EXPECT_NE(message.find("2 problems with the source checkpoint"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("rank0.safetensors: tensor 'w' (w[0:4, 0:4]) is "
                         "float32, the plan expects bfloat16"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("rank1.safetensors"), std::string::npos) << message;
  // The run created the destination directory and removes it again.
  EXPECT_FALSE(std::filesystem::exists(scratch.file("out")));
}

TEST_F(LocalExecutorTest, ExistingOutputsAndTheSourceAreNeverOverwritten) {
  std::optional<plan::Plan> plan = readPlan(kPlan);
  ASSERT_TRUE(plan);
  ASSERT_TRUE(runtime::runPlanLocally(*plan, options("out")).ok());
  Expected<RunReport> again = runtime::runPlanLocally(*plan, options("out"));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already holds a checkpoint"),
            std::string::npos);
  RunOptions o = options("out");
  o.overwrite = true;
  ASSERT_TRUE(runtime::runPlanLocally(*plan, o).ok());
  expectConverted("out");

  RunOptions intoSource = options("in");
  Expected<RunReport> source = runtime::runPlanLocally(*plan, intoSource);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.error().message.find("is the source directory"),
            std::string::npos);
}

TEST_F(LocalExecutorTest, BuffersBeyondTheMemoryLimitAreRefused) {
  std::optional<plan::Plan> plan = readPlan(kPlan);
  ASSERT_TRUE(plan);
  RunOptions o = options("out");
  o.memoryLimit = 100;
  Expected<RunReport> report = runtime::runPlanLocally(*plan, o);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().hint.find("--memory-budget"), std::string::npos);
  // The message names the round that needs the most, and how much.
  int64_t largest = -1;
  std::string where;
  for (uint32_t r = 0; r < plan->ranks; ++r)
    for (size_t k = 0; k < plan->programs[r].rounds.size(); ++k)
      if (plan->programs[r].rounds[k].bufferBytes() > largest) {
        largest = plan->programs[r].rounds[k].bufferBytes();
        where = "rank " + std::to_string(r) + "'s round " + std::to_string(k);
      }
  EXPECT_NE(report.error().message.find("the largest is " + where),
            std::string::npos)
      << report.error().message;
  EXPECT_FALSE(std::filesystem::exists(scratch.file("out")));
}

} // namespace
} // namespace aoa
