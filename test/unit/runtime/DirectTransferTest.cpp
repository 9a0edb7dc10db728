//===- DirectTransferTest.cpp - File-to-file copies of unchanged runs -----===//
//
// Which read/write pairs of a round may skip the buffer (the documented
// sample: its two flat moment halves, one sent alone and one inside a
// two-buffer message; never w, which is transposed, nor q, reshaped), that
// resumption narrows them to the live ones, and that a writer copies bytes
// from another file and reports a source that ends early. The executor's
// byte-for-byte comparison of both paths is in LocalExecutorTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "CapturedDiagnostics.h"
#include "SamplePlanText.h"
#include "ScratchDirectory.h"

#include "aoa/formats/plan/PlanReader.h"
#include "aoa/runtime/exec/DirectTransfers.h"
#include "aoa/runtime/exec/LiveInstructions.h"
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/storage/StoredRegion.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <numeric>
#include <unistd.h>

using namespace aoa;
using namespace aoa::runtime;

namespace {

std::vector<DirectTransfer> transfersOfRound(const plan::Plan &plan, size_t r,
                                             const InstructionMask *live) {
  std::vector<RankRound> ranks;
  for (uint32_t rank = 0; rank < plan.programs.size(); ++rank)
    ranks.emplace_back(plan, rank, r,
                       live && r < (*live)[rank].size()
                           ? llvm::ArrayRef<uint8_t>((*live)[rank][r])
                           : llvm::ArrayRef<uint8_t>());
  Expected<std::vector<std::vector<SendRef>>> messages = matchMessages(plan, r);
  EXPECT_TRUE(messages.ok());
  return findDirectTransfers(plan, ranks, *messages);
}

std::string describe(const std::vector<DirectTransfer> &transfers) {
  std::string out;
  for (const DirectTransfer &t : transfers)
    out += std::to_string(t.readRank) + ":" + std::to_string(t.read) + "->" +
           std::to_string(t.writeRank) + ":" + std::to_string(t.write) + " ";
  return out;
}

TEST(DirectTransfers, TheSampleCopiesItsFlatMomentHalvesAcrossRanks) {
  test::CapturedDiagnostics captured;
  std::optional<plan::Plan> plan = readPlanText(
      "sample.plan", test::kSamplePlanText, captured.sources, captured.diags);
  ASSERT_TRUE(plan) << captured.all();
  // Rank 0's read 1 (src 3, sent alone) -> rank 1's write 6 (dst 2); rank
  // 1's read 1 (src 2, second buffer of its message) -> rank 0's write 8
  // (dst 1). Round 1's kc is flattened by a copy first.
  EXPECT_EQ(describe(transfersOfRound(*plan, 0, nullptr)),
            "0:1->1:6 1:1->0:8 ");
  EXPECT_EQ(describe(transfersOfRound(*plan, 1, nullptr)), "");

  // opt-rank0.safetensors (dst file 1) finished: rank 1's message still
  // goes (it carries w's half) but the moment half in it has no live use.
  Expected<InstructionMask> live =
      liveInstructions(*plan, {false, true, false, false});
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(describe(transfersOfRound(*plan, 0, &*live)), "0:1->1:6 ");
}

TEST(DirectTransfers, SingleStoredRunsIncludeFlatRanges) {
  Box box = Box::fromShape({4, 8});
  EXPECT_EQ(singleStoredRun(box, std::nullopt, Box::fromShape({2, 8})), 0);
  EXPECT_EQ(singleStoredRun(box, FlatElementRange{16, 32},
                            Box({2, 0}, {2, 8})),
            0);
  EXPECT_EQ(singleStoredRun(box, std::nullopt, Box({1, 2}, {1, 3})), 10);
  // A column strip is 4 runs; a region beyond the flat range, or empty, none.
  EXPECT_FALSE(singleStoredRun(box, std::nullopt, Box({0, 0}, {4, 2})));
  EXPECT_FALSE(singleStoredRun(box, FlatElementRange{0, 16},
                               Box({1, 0}, {2, 8})));
  EXPECT_FALSE(singleStoredRun(box, std::nullopt, Box({1, 0}, {0, 8})));
}

TEST(DirectTransfers, AWriterCopiesBytesFromAnotherFile) {
  test::ScratchDirectory scratch;
  std::string sourcePath = scratch.file("source.bin");
  std::vector<uint8_t> bytes(3 << 20);
  std::iota(bytes.begin(), bytes.end(), uint8_t(7));
  {
    FileDescriptor out(::open(sourcePath.c_str(),
                              O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    ASSERT_TRUE(out.isOpen());
    ASSERT_EQ(writeAt(out.get(), bytes.data(), bytes.size(), 0).bytes,
              bytes.size());
  }
  FileDescriptor source(::open(sourcePath.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(source.isOpen());
  uint64_t half = bytes.size() / 2;
  Expected<SafetensorsWriter> writer = SafetensorsWriter::create(
      scratch.file("t.safetensors"),
      {{"t", DType::U8, {int64_t(bytes.size() - 100)}}});
  ASSERT_TRUE(writer.ok()) << writer.error().toString();
  // Out of order, from an offset inside the source.
  ASSERT_TRUE(writer->copyFromFile("t", half, source.get(), 100 + half,
                                   bytes.size() - 100 - half)
                  .ok());
  ASSERT_TRUE(writer->copyFromFile("t", 0, source.get(), 100, half).ok());
  ASSERT_TRUE(writer->commit().ok());
  Expected<SafetensorsReader> reader =
      SafetensorsReader::open(scratch.file("t.safetensors"));
  ASSERT_TRUE(reader.ok());
  std::vector<uint8_t> back(bytes.size() - 100);
  ASSERT_TRUE(reader->readTensor(reader->tensors()[0], back.data(),
                                 back.size())
                  .ok());
  EXPECT_TRUE(std::equal(back.begin(), back.end(), bytes.begin() + 100));

  // The source ends before the range does.
  Expected<SafetensorsWriter> short_ = SafetensorsWriter::create(
      scratch.file("s.safetensors"), {{"t", DType::U8, {64}}});
  ASSERT_TRUE(short_.ok());
  Status status = short_->copyFromFile("t", 0, source.get(), bytes.size() - 10, 64);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("the source file ended after 10 bytes"),
            std::string::npos)
      << status.error().message;
  EXPECT_FALSE(short_->commit().ok());
}

} // namespace
