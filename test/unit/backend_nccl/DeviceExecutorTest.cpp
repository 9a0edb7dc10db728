//===- DeviceExecutorTest.cpp - The nccl backend's data path --------------===//
//
// Runs docs/plan-format.md's sample plan (a transpose + cast across ranks,
// flat ranges on both sides in one grouped message, a reshape, a flatten)
// through the nccl backend's executor on the emulated device, with both
// ranks as threads of this process (an in-process RankGroup and transport),
// and checks every destination value: into files, as aoa-run does, and into
// device tensors, the library entry point for a training process; and that
// device tensors that do not match the plan are refused before anything
// is touched.
//
//===----------------------------------------------------------------------===//
#include "CapturedDiagnostics.h"
#include "SampleCheckpoint.h"
#include "SamplePlanText.h"
#include "ScratchDirectory.h"
#include "ThreadRankGroup.h"

#include "Device.h"
#include "DeviceExecutor.h"
#include "DeviceTransport.h"
#include "aoa/formats/plan/PlanReader.h"
#include "aoa/runtime/exec/RankRound.h"
#include "aoa/runtime/support/ContentHash.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace aoa {
namespace {

using runtime::RankRunResult;
using test::SharedJob;
using test::ThreadRankGroup;
/// Values by (file, tensor name), as test::expectedDestination() gives them.
using SampleValues =
    std::map<std::pair<std::string, std::string>, std::vector<float>>;

/// Messages through the shared mailboxes (the emulated device's memory is
/// host memory): a send copies its buffers, back to back, into the peer's
/// mailbox; a receive waits for the next message from its peer.
class MailboxTransport final : public runtime::DeviceTransport {
public:
  MailboxTransport(SharedJob &job, uint32_t rank) : job_(job), rank_(rank) {}

  runtime::Status exchange(const runtime::RankRound &round,
                           llvm::function_ref<uint8_t *(uint32_t)> address,
                           runtime::Device &, unsigned,
                           uint64_t &received) override {
    for (uint32_t i : round.sends()) {
      const plan::Instruction &inst = round.instruction(i);
      std::vector<uint8_t> message;
      for (uint32_t b : inst.buffers)
        message.insert(message.end(), address(b),
                       address(b) + round.bufferBytes(b));
      std::lock_guard<std::mutex> lock(job_.mutex);
      job_.mailboxes[{rank_, inst.peer}].push_back(std::move(message));
      job_.changed.notify_all();
    }
    for (uint32_t i : round.receives()) {
      const plan::Instruction &inst = round.instruction(i);
      std::unique_lock<std::mutex> lock(job_.mutex);
      auto &box = job_.mailboxes[{inst.peer, rank_}];
      job_.changed.wait(lock, [&] { return !box.empty(); });
      std::vector<uint8_t> message = std::move(box.front());
      box.pop_front();
      size_t offset = 0;
      for (uint32_t b : inst.buffers) {
        size_t bytes = size_t(round.bufferBytes(b));
        if (offset + bytes > message.size())
          return runtime::Error{"a message shorter than its receive", ""};
        std::memcpy(address(b), message.data() + offset, bytes);
        offset += bytes;
        received += bytes;
      }
    }
    return runtime::Status();
  }

private:
  SharedJob &job_;
  uint32_t rank_;
};

class DeviceExecutorTest : public ::testing::Test {
protected:
  void SetUp() override {
    test::writeSampleSources(scratch.file("in"));
    planText = test::kSamplePlanText;
    plan = readPlanText("sample.plan", planText, captured.sources,
                        captured.diags);
    ASSERT_TRUE(plan) << captured.all();
  }

  runtime::RunOptions options(const std::string &destination) {
    runtime::RunOptions o;
    o.sourceDirectory = scratch.file("in");
    o.destinationDirectory = scratch.file(destination);
    o.threads = 2;
    o.planFingerprint = runtime::contentHash(planText.data(), planText.size());
    return o;
  }

  /// Runs `rankMain(rank, group, device, transport)` on a thread per rank.
  std::vector<RankRunResult> runJob(
      const std::function<RankRunResult(uint32_t, runtime::RankGroup &,
                                        runtime::Device &,
                                        runtime::DeviceTransport &)> &rankMain) {
    SharedJob job(plan->ranks);
    std::vector<RankRunResult> results(plan->ranks);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < plan->ranks; ++r)
      threads.emplace_back([&, r] {
        ThreadRankGroup group(job, r);
        MailboxTransport transport(job, r);
        std::unique_ptr<runtime::Device> device = runtime::makeEmulatedDevice();
        results[r] = rankMain(r, group, *device, transport);
      });
    for (std::thread &thread : threads)
      thread.join();
    return results;
  }

  /// The sample's destination tensors, as device tensors of rank `rank`
  /// backed by `storage`.
  std::vector<runtime::DeviceTensor>
  deviceTensorsOf(uint32_t rank, SampleValues &storage) {
    std::vector<runtime::DeviceTensor> tensors;
    for (const plan::StoredTensor &tensor : plan->destinationTensors) {
      const plan::File &file = plan->destinationFiles[tensor.file];
      if (file.rank != rank)
        continue;
      std::vector<float> &values = storage[{file.path, tensor.name}];
      values.assign(size_t(tensor.storedElements()), -1.0f);
      tensors.push_back({file.path, tensor.name, values.data(),
                         uint64_t(values.size() * sizeof(float))});
    }
    return tensors;
  }

  test::ScratchDirectory scratch;
  test::CapturedDiagnostics captured;
  std::string planText;
  std::optional<plan::Plan> plan;
};

TEST_F(DeviceExecutorTest, WritesTheSamplesFilesExactly) {
  runtime::RunOptions o = options("out");
  std::vector<RankRunResult> results =
      runJob([&](uint32_t, runtime::RankGroup &group, runtime::Device &device,
                 runtime::DeviceTransport &transport) {
        return runtime::runPlanOnDevice(*plan, o, group, device, transport,
                                        runtime::JobLauncher());
      });
  for (const RankRunResult &result : results)
    ASSERT_TRUE(result.ok()) << (result.error ? result.error->toString()
                                              : "another rank failed");
  test::expectSampleDestination(scratch.file("out"));
  EXPECT_TRUE(std::filesystem::exists(scratch.file("out/metadata.json")));
  const runtime::RunReport &report = results[0].report;
  EXPECT_EQ(report.filesWritten, 4u);
  EXPECT_EQ(report.bytesRead, 64u + 128u + 96u);
  EXPECT_EQ(report.bytesWritten, 128u + 128u + 96u);
  EXPECT_EQ(report.bytesExchanged, 32u + 64u + 64u);
}

TEST_F(DeviceExecutorTest, FillsDeviceTensorsInsteadOfFiles) {
  std::vector<SampleValues> storage(plan->ranks);
  runtime::RunOptions o = options("unused");
  std::vector<RankRunResult> results =
      runJob([&](uint32_t rank, runtime::RankGroup &group,
                 runtime::Device &device, runtime::DeviceTransport &transport) {
        return runtime::loadPlanIntoDeviceTensors(
            *plan, o, group, device, transport,
            deviceTensorsOf(rank, storage[rank]));
      });
  for (const RankRunResult &result : results)
    ASSERT_TRUE(result.ok()) << (result.error ? result.error->toString()
                                              : "another rank failed");
  SampleValues loaded;
  for (auto &tensors : storage)
    loaded.insert(tensors.begin(), tensors.end());
  EXPECT_EQ(loaded, test::expectedDestination());
  // No destination directory, no files.
  EXPECT_FALSE(std::filesystem::exists(scratch.file("unused")));
  EXPECT_EQ(results[0].report.bytesWritten, 128u + 128u + 96u);
  EXPECT_EQ(results[0].report.bytesExchanged, 32u + 64u + 64u);
}

TEST_F(DeviceExecutorTest, DeviceTensorsThatDoNotMatchThePlanAreRefused) {
  std::vector<SampleValues> storage(plan->ranks);
  runtime::RunOptions o = options("unused");
  std::vector<RankRunResult> results =
      runJob([&](uint32_t rank, runtime::RankGroup &group,
                 runtime::Device &device, runtime::DeviceTransport &transport) {
        std::vector<runtime::DeviceTensor> tensors =
            deviceTensorsOf(rank, storage[rank]);
        if (rank == 1) {
          // qc's size is wrong, kf is missing, and one is not this rank's.
          for (runtime::DeviceTensor &tensor : tensors)
            if (tensor.name == "qc")
              tensor.bytes -= 4;
          tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                       [](const runtime::DeviceTensor &t) {
                                         return t.name == "kf";
                                       }),
                        tensors.end());
          tensors.push_back({"model-00001.safetensors", "wt",
                             storage[rank].begin()->second.data(), 128});
        }
        return runtime::loadPlanIntoDeviceTensors(*plan, o, group, device,
                                                  transport, tensors);
      });
  ASSERT_FALSE(results[0].ok());
  EXPECT_EQ(results[0].failedRanks, std::vector<uint32_t>{1});
  EXPECT_FALSE(results[0].error);
  ASSERT_TRUE(results[1].error);
  const std::string &message = results[1].error->message;
  EXPECT_NE(message.find("model-00002.safetensors: qc is given 44 bytes "
                         "but holds float32[3, 2, 2] (48 bytes)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("model-00002.safetensors: kf is not given"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("model-00001.safetensors: wt is not a tensor of "
                         "this rank's destination files"),
            std::string::npos)
      << message;
  // Nothing was touched: rank 0's tensors still hold their fill.
  for (const auto &[where, values] : storage[0])
    for (float value : values)
      ASSERT_EQ(value, -1.0f) << where.second;
}

} // namespace
} // namespace aoa
