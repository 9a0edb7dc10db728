//===- RankDestinationFilesTest.cpp - One rank's share of a destination ---===//
//
// The mpi backend's processes share one destination directory: one prepares
// it, then each rank stages, commits and journals only its own files
// (DST/.aoa-run/journal.RANK), moves them into place, and rank 0 writes
// metadata.json with every rank's hashes. Here the ranks of the documented
// sample plan are played one after another in one process: a rank never
// removes another's staged files, resumes only from its own journal (and
// the local backend's), and the local backend resumes from the ranks'
// journals too.
//
//===----------------------------------------------------------------------===//
#include "CapturedDiagnostics.h"
#include "SamplePlanText.h"
#include "RunJournal.h"
#include "ScratchDirectory.h"

#include "aoa/formats/plan/PlanReader.h"
#include "aoa/runtime/storage/DestinationFiles.h"
#include "aoa/runtime/support/ContentHash.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace aoa {
namespace {

namespace fs = std::filesystem;
using runtime::DestinationFiles;
using runtime::DestinationOptions;
using runtime::Expected;

class RankDestinationFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    text = test::kSamplePlanText;
    plan = readPlanText("sample.plan", text, captured.sources, captured.diags);
    ASSERT_TRUE(plan) << captured.all();
    fs::create_directories(scratch.file("src"));
    destination = scratch.file("dst");
  }

  DestinationOptions options(std::optional<uint32_t> rank) const {
    DestinationOptions o;
    o.planFingerprint = 42;
    o.rank = rank;
    return o;
  }

  std::unique_ptr<DestinationFiles> open(std::optional<uint32_t> rank) {
    Expected<std::unique_ptr<DestinationFiles>> files = DestinationFiles::open(
        *plan, destination, scratch.file("src"), options(rank));
    EXPECT_TRUE(files.ok()) << files.error().toString();
    return files.ok() ? std::move(*files) : nullptr;
  }

  /// Writes every tensor of `rank`'s files, whole, with bytes from `seed`.
  void writeRank(DestinationFiles &files, uint32_t rank, uint8_t seed) {
    for (uint32_t t = 0; t < plan->destinationTensors.size(); ++t) {
      const plan::StoredTensor &tensor = plan->destinationTensors[t];
      if (plan->destinationFiles[tensor.file].rank != rank)
        continue;
      std::vector<uint8_t> bytes(size_t(tensor.storedElements()) *
                                 dtypeSize(tensor.dtype));
      for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = uint8_t(seed + t + i);
      runtime::Status written = files.writeRegion(t, tensor.box, bytes.data());
      ASSERT_TRUE(written.ok()) << written.error().toString();
    }
  }

  bool exists(const std::string &name) const {
    return fs::exists(destination + "/" + name);
  }

  test::CapturedDiagnostics captured;
  test::ScratchDirectory scratch;
  std::string text;
  std::optional<plan::Plan> plan;
  std::string destination;
};

TEST_F(RankDestinationFilesTest, RanksInstallTheirFilesAndRankZeroTheMetadata) {
  Expected<runtime::PreparedDestination> created =
      DestinationFiles::prepareDirectory(destination, scratch.file("src"),
                                         options(std::nullopt));
  ASSERT_TRUE(created.ok()) << created.error().toString();
  EXPECT_TRUE(created->created);

  std::unique_ptr<DestinationFiles> rank0 = open(0);
  ASSERT_TRUE(rank0);
  EXPECT_EQ(rank0->bytesToWrite(), 128u + 64u);
  writeRank(*rank0, 0, 1);
  EXPECT_TRUE(exists(".aoa-run/files/model-00001.safetensors"));
  EXPECT_TRUE(exists(".aoa-run/files/opt-rank0.safetensors"));

  // Rank 1 opens after rank 0 finished: rank 0's staged files stay.
  std::unique_ptr<DestinationFiles> rank1 = open(1);
  ASSERT_TRUE(rank1);
  EXPECT_EQ(rank1->bytesToWrite(), 64u + 48u + 48u);
  EXPECT_TRUE(exists(".aoa-run/files/model-00001.safetensors"));
  EXPECT_TRUE(exists(".aoa-run/journal.0"));
  EXPECT_TRUE(exists(".aoa-run/journal.1"));
  EXPECT_FALSE(exists(".aoa-run/journal"));
  writeRank(*rank1, 1, 2);
  EXPECT_EQ(rank0->finishedFiles(),
            (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(rank1->finishedFiles(),
            (std::vector<bool>{false, false, true, true}));

  ASSERT_TRUE(rank0->moveFilesIntoPlace().ok());
  ASSERT_TRUE(rank1->moveFilesIntoPlace().ok());
  EXPECT_TRUE(exists("model-00001.safetensors"));
  EXPECT_TRUE(exists("model-00002.safetensors"));
  EXPECT_FALSE(exists("metadata.json"));

  // Each rank knows its own tensors' hashes; together they are all.
  std::vector<uint64_t> hashes = rank0->tensorHashes();
  std::vector<uint64_t> hashes1 = rank1->tensorHashes();
  for (size_t t = 0; t < hashes.size(); ++t) {
    bool ownedByRank0 = t < 2;
    EXPECT_EQ(hashes[t] != 0, ownedByRank0) << t;
    EXPECT_EQ(hashes1[t] != 0, !ownedByRank0) << t;
    hashes[t] |= hashes1[t];
  }
  ASSERT_TRUE(rank0->writeMetadata(hashes).ok());
  EXPECT_FALSE(exists(".aoa-run"));
  std::ifstream in(destination + "/metadata.json");
  std::stringstream metadata;
  metadata << in.rdbuf();
  for (uint64_t hash : hashes)
    EXPECT_NE(metadata.str().find(runtime::formatContentHash(hash)),
              std::string::npos);
}

TEST_F(RankDestinationFilesTest, EachRankResumesFromItsOwnJournal) {
  ASSERT_TRUE(DestinationFiles::prepareDirectory(
                  destination, scratch.file("src"), options(std::nullopt))
                  .ok());
  {
    std::unique_ptr<DestinationFiles> rank0 = open(0);
    ASSERT_TRUE(rank0);
    writeRank(*rank0, 0, 1);
    std::unique_ptr<DestinationFiles> rank1 = open(1);
    ASSERT_TRUE(rank1);
    // Rank 1 is interrupted with a partial file.
    std::vector<uint8_t> half(24);
    Box top(std::vector<int64_t>{0, 0}, std::vector<int64_t>{2, 3});
    ASSERT_TRUE(rank1->writeRegion(4, top, half.data()).ok());
  }
  std::unique_ptr<DestinationFiles> rank0 = open(0);
  ASSERT_TRUE(rank0);
  EXPECT_EQ(rank0->resumedFileCount(), 2u);
  EXPECT_EQ(rank0->bytesToWrite(), 0u);
  std::unique_ptr<DestinationFiles> rank1 = open(1);
  ASSERT_TRUE(rank1);
  EXPECT_EQ(rank1->resumedFileCount(), 0u);
  rank1->releaseUnfinishedFiles();
  rank0.reset();
  rank1.reset();

  // The local backend resumes from the ranks' journals as well.
  std::unique_ptr<DestinationFiles> local = open(std::nullopt);
  ASSERT_TRUE(local);
  EXPECT_EQ(local->resumedFileCount(), 2u);
  EXPECT_EQ(local->finishedFiles(),
            (std::vector<bool>{true, true, false, false}));
}

TEST_F(RankDestinationFilesTest, AJournalOfAnotherPlanIsRefusedWhenPreparing) {
  fs::create_directories(destination + "/.aoa-run");
  {
    Expected<std::unique_ptr<runtime::RunJournal>> other =
        runtime::RunJournal::open(destination + "/.aoa-run/journal.1", 7);
    ASSERT_TRUE(other.ok());
  }
  Expected<runtime::PreparedDestination> prepared =
      DestinationFiles::prepareDirectory(destination, scratch.file("src"),
                                         options(std::nullopt));
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.error().message.find("belongs to another plan"),
            std::string::npos)
      << prepared.error().message;
  DestinationOptions restart = options(std::nullopt);
  restart.restart = true;
  prepared = DestinationFiles::prepareDirectory(destination,
                                                scratch.file("src"), restart);
  ASSERT_TRUE(prepared.ok()) << prepared.error().toString();
  EXPECT_FALSE(prepared->created);
  // Only the lock, which the preparing process holds, stays.
  EXPECT_FALSE(exists(".aoa-run/journal.1"));
  EXPECT_TRUE(exists(".aoa-run/lock"));
}

// Issue 20 D4: an --overwrite run killed while moving files into place left
// the old checkpoint's metadata.json beside a mix of new and old files. The
// old metadata.json goes (durably) before the first file moves: here rank 0
// has moved its files, rank 1 not yet, as a kill between them would leave.
TEST_F(RankDestinationFilesTest, OverwritingRemovesTheOldMetadataBeforeMoving) {
  fs::create_directories(destination);
  for (const char *name :
       {"metadata.json", "model-00001.safetensors", "model-00002.safetensors"})
    std::ofstream(destination + "/" + name) << "old";
  DestinationOptions overwrite = options(std::nullopt);
  overwrite.overwrite = true;
  {
    Expected<runtime::PreparedDestination> prepared =
        DestinationFiles::prepareDirectory(destination, scratch.file("src"),
                                           overwrite);
    ASSERT_TRUE(prepared.ok()) << prepared.error().toString();
    std::vector<std::unique_ptr<DestinationFiles>> ranks;
    for (uint32_t rank : {0u, 1u}) {
      overwrite.rank = rank;
      Expected<std::unique_ptr<DestinationFiles>> files =
          DestinationFiles::open(*plan, destination, scratch.file("src"),
                                 overwrite);
      ASSERT_TRUE(files.ok()) << files.error().toString();
      ranks.push_back(std::move(*files));
      writeRank(*ranks.back(), rank, 3);
    }
    EXPECT_TRUE(exists("metadata.json")); // nothing moved yet
    ASSERT_TRUE(ranks[0]->moveFilesIntoPlace().ok());
    EXPECT_FALSE(exists("metadata.json"));
    EXPECT_EQ(fs::file_size(destination + "/model-00002.safetensors"), 3u);
    EXPECT_NE(fs::file_size(destination + "/model-00001.safetensors"), 3u);
  }
  // The next run resumes from both ranks' files and completes the install.
  overwrite.rank.reset();
  Expected<std::unique_ptr<DestinationFiles>> local = DestinationFiles::open(
      *plan, destination, scratch.file("src"), overwrite);
  ASSERT_TRUE(local.ok()) << local.error().toString();
  EXPECT_EQ((*local)->resumedFileCount(), 4u);
  ASSERT_TRUE((*local)->install().ok());
  EXPECT_TRUE(exists("metadata.json"));
  EXPECT_NE(fs::file_size(destination + "/metadata.json"), 3u);
  EXPECT_NE(fs::file_size(destination + "/model-00002.safetensors"), 3u);
  EXPECT_FALSE(exists(".aoa-run"));
}

// Issue 20 D3: the process that prepared the destination holds its lock;
// another preparing process is refused until it is released.
TEST_F(RankDestinationFilesTest, OnePreparedRunAtATime) {
  Expected<runtime::PreparedDestination> first =
      DestinationFiles::prepareDirectory(destination, scratch.file("src"),
                                         options(std::nullopt));
  ASSERT_TRUE(first.ok()) << first.error().toString();
  Expected<runtime::PreparedDestination> second =
      DestinationFiles::prepareDirectory(destination, scratch.file("src"),
                                         options(std::nullopt));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().message,
            "another aoa-run is writing to the destination directory '" +
                destination + "' (it holds '" + destination +
                "/.aoa-run/lock')");
  EXPECT_TRUE(exists(".aoa-run/lock"));
  first->lock.close();
  EXPECT_TRUE(DestinationFiles::prepareDirectory(
                  destination, scratch.file("src"), options(std::nullopt))
                  .ok());
}

TEST_F(RankDestinationFilesTest, RemovingTheStagingDirectoryAfterAFailure) {
  ASSERT_TRUE(DestinationFiles::prepareDirectory(
                  destination, scratch.file("src"), options(std::nullopt))
                  .ok());
  std::unique_ptr<DestinationFiles> rank1 = open(1);
  ASSERT_TRUE(rank1);
  EXPECT_FALSE(rank1->anyFileFinished());
  rank1->releaseUnfinishedFiles();
  DestinationFiles::removeStagingDirectory(destination + "/", true);
  EXPECT_FALSE(fs::exists(destination));
}

} // namespace
} // namespace aoa
