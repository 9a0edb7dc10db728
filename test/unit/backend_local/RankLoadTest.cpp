//===- RankLoadTest.cpp - One rank's tensors loaded into memory -----------===//
//
// loadRankLocally runs what one destination rank needs of a plan and writes
// its tensors into the caller's memory. On docs/plan-format.md's example
// plan (each rank receives bytes that the other rank reads), every rank's
// loaded bytes must equal what runPlanLocally writes into that rank's
// files; memory that does not match the plan is refused before anything is
// written, and an interruption stops the load.
//
//===----------------------------------------------------------------------===//
#include "CapturedDiagnostics.h"
#include "SampleCheckpoint.h"
#include "SamplePlanText.h"
#include "ScratchDirectory.h"

#include "aoa/formats/plan/PlanReader.h"
#include "aoa/runtime/backends/LocalBackend.h"
#include "aoa/runtime/storage/SafetensorsReader.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace aoa {
namespace {

using runtime::CallerTensor;
using runtime::Expected;
using runtime::RunOptions;
using runtime::RunReport;

class RankLoadTest : public ::testing::Test {
protected:
  void SetUp() override {
    test::writeSampleSources(scratch.file("in"));
    plan = readPlanText("sample.plan", test::kSamplePlanText, captured.sources,
                        captured.diags);
    ASSERT_TRUE(plan);
  }

  RunOptions options() {
    RunOptions o;
    o.sourceDirectory = scratch.file("in");
    o.destinationDirectory = scratch.file("out");
    o.threads = 2;
    return o;
  }

  /// Zeroed memory for every tensor of `rank`'s destination files, by
  /// (file, name).
  std::map<std::pair<std::string, std::string>, std::vector<uint8_t>>
  memoryFor(uint32_t rank) {
    std::map<std::pair<std::string, std::string>, std::vector<uint8_t>> memory;
    for (uint32_t t = 0; t < plan->destinationTensors.size(); ++t) {
      const plan::StoredTensor &tensor = plan->destinationTensors[t];
      const plan::File &file = plan->destinationFiles[tensor.file];
      if (file.rank == rank)
        memory[{file.path, tensor.name}].assign(
            runtime::destinationTensorBytes(*plan, t), 0);
    }
    return memory;
  }

  /// The tensors of `memory`, named by their name alone.
  static std::vector<CallerTensor>
  byName(std::map<std::pair<std::string, std::string>, std::vector<uint8_t>>
             &memory) {
    std::vector<CallerTensor> tensors;
    for (auto &[where, bytes] : memory)
      tensors.push_back({"", where.second, bytes.data(), bytes.size()});
    return tensors;
  }

  /// The bytes of tensor `name` in the file `path`.
  static std::vector<uint8_t> fileTensor(const std::string &path,
                                         const std::string &name) {
    auto reader = runtime::SafetensorsReader::open(path);
    EXPECT_TRUE(reader.ok()) << reader.error().toString();
    if (!reader.ok())
      return {};
    const runtime::SafetensorsTensor *tensor = reader->find(name);
    EXPECT_NE(tensor, nullptr) << path << ": " << name;
    if (!tensor)
      return {};
    std::vector<uint8_t> bytes(tensor->byteSize());
    EXPECT_TRUE(reader->readTensor(*tensor, bytes.data(), bytes.size()).ok());
    return bytes;
  }

  test::ScratchDirectory scratch;
  test::CapturedDiagnostics captured;
  std::optional<plan::Plan> plan;
};

TEST_F(RankLoadTest, EveryRankLoadsTheBytesTheRunWrites) {
  Expected<RunReport> run = runtime::runPlanLocally(*plan, options());
  ASSERT_TRUE(run.ok()) << run.error().toString();
  for (uint32_t rank = 0; rank < plan->ranks; ++rank) {
    auto memory = memoryFor(rank);
    ASSERT_FALSE(memory.empty());
    Expected<RunReport> loaded =
        runtime::loadRankLocally(*plan, options(), rank, byName(memory));
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    uint64_t total = 0;
    for (const auto &[where, bytes] : memory) {
      EXPECT_EQ(bytes,
                fileTensor(scratch.file("out/" + where.first), where.second))
          << "rank " << rank << ": " << where.first << ": " << where.second;
      total += bytes.size();
    }
    EXPECT_EQ(loaded->bytesWritten, total) << "rank " << rank;
    // Only this rank's part of the work ran.
    EXPECT_LT(loaded->bytesRead, run->bytesRead) << "rank " << rank;
  }
}

TEST_F(RankLoadTest, TensorsNamedWithTheirFilesAreLoadedAlike) {
  auto memory = memoryFor(1);
  std::vector<CallerTensor> tensors;
  for (auto &[where, bytes] : memory)
    tensors.push_back({where.first, where.second, bytes.data(), bytes.size()});
  Expected<RunReport> loaded =
      runtime::loadRankLocally(*plan, options(), 1, tensors);
  ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
  for (const auto &[where, values] : test::expectedDestination()) {
    auto found = memory.find(where);
    if (found == memory.end())
      continue;
    std::vector<uint8_t> expected = test::f32Bytes(values);
    EXPECT_EQ(found->second, expected) << where.first << ": " << where.second;
  }
}

TEST_F(RankLoadTest, NothingIsWrittenToDisk) {
  auto memory = memoryFor(0);
  ASSERT_TRUE(
      runtime::loadRankLocally(*plan, options(), 0, byName(memory)).ok());
  EXPECT_FALSE(test::fileExists(scratch.file("out")));
}

TEST_F(RankLoadTest, MemoryThatDoesNotMatchIsRefusedBeforeAnyWrite) {
  auto memory = memoryFor(1);
  std::vector<CallerTensor> tensors;
  for (auto &[where, bytes] : memory) {
    bytes.assign(bytes.size(), 0xAB);
    if (where.second == "kf")
      continue; // not given
    uint64_t size = where.second == "qc" ? bytes.size() - 4 : bytes.size();
    tensors.push_back({"", where.second, bytes.data(), size});
  }
  std::vector<uint8_t> extra(128);
  tensors.push_back({"", "wt", extra.data(), extra.size()});
  Expected<RunReport> loaded =
      runtime::loadRankLocally(*plan, options(), 1, tensors);
  ASSERT_FALSE(loaded.ok());
  const std::string &message = loaded.error().message;
  EXPECT_NE(message.find("the tensors do not match this rank's destination "
                         "tensors"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("qc is given 44 bytes but holds float32[3, 2, 2] "
                         "(48 bytes)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("model-00002.safetensors: kf is not given"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("wt is not a tensor of this rank's destination files"),
            std::string::npos)
      << message;
  for (const auto &[where, bytes] : memory)
    EXPECT_EQ(bytes, std::vector<uint8_t>(bytes.size(), 0xAB)) << where.second;
}

TEST_F(RankLoadTest, RanksOutsideThePlanAreRefused) {
  Expected<RunReport> loaded =
      runtime::loadRankLocally(*plan, options(), 2, {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message, "rank 2 is not a rank of the plan");
  EXPECT_EQ(loaded.error().hint, "the plan has 2 ranks (0 to 1)");
}

TEST_F(RankLoadTest, AMissingSourceFileIsAnError) {
  std::filesystem::remove(scratch.file("in/src/rank1.safetensors"));
  auto memory = memoryFor(0);
  Expected<RunReport> loaded =
      runtime::loadRankLocally(*plan, options(), 0, byName(memory));
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("src/rank1.safetensors"),
            std::string::npos)
      << loaded.error().toString();
}

TEST_F(RankLoadTest, AnInterruptionStopsTheLoadBetweenRounds) {
  auto memory = memoryFor(1);
  RunOptions o = options();
  o.interrupted = [] { return true; };
  Expected<RunReport> loaded =
      runtime::loadRankLocally(*plan, o, 1, byName(memory));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message, "interrupted");
}

TEST_F(RankLoadTest, AnInterruptedRunInstallsNothing) {
  RunOptions o = options();
  o.interrupted = [] { return true; };
  Expected<RunReport> run = runtime::runPlanLocally(*plan, o);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().message, "interrupted");
  EXPECT_FALSE(test::fileExists(scratch.file("out/metadata.json")));
  EXPECT_FALSE(test::fileExists(scratch.file("out/.aoa-run")));
}

} // namespace
} // namespace aoa
