//===- RendezvousTest.cpp - Sharing NCCL ids through a directory ----------===//
#include "Rendezvous.h"

#include "ScratchDirectory.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using namespace aoa::runtime;
using aoa::test::ScratchDirectory;
using namespace std::chrono_literals;

namespace {

std::string secretOf(size_t size) {
  std::string secret(size, '\0');
  for (size_t i = 0; i < size; ++i)
    secret[i] = char((i * 37 + 11) & 0xFF); // NUL bytes included
  return secret;
}

TEST(Rendezvous, RanksThatWaitReceiveRankZerosBytes) {
  ScratchDirectory dir;
  std::string secret = secretOf(256);
  std::vector<std::string> received(3);
  std::vector<std::thread> ranks;
  for (size_t r = 0; r < received.size(); ++r)
    ranks.emplace_back([&, r] {
      Expected<std::string> got = awaitRendezvous(dir.path(), 256, 10s);
      received[r] = got.ok() ? *got : "error: " + got.error().message;
    });
  std::this_thread::sleep_for(50ms); // the others are waiting by now
  ASSERT_TRUE(publishRendezvous(dir.path(), secret).ok());
  for (std::thread &rank : ranks)
    rank.join();
  for (const std::string &got : received)
    EXPECT_EQ(got, secret);
  // Only the file itself is left (no temporary), and removing it frees the
  // directory for the next job.
  EXPECT_EQ(dir.list(), std::vector<std::string>{"aoa-run-nccl-id"});
  ASSERT_TRUE(removeRendezvous(dir.path()).ok());
  EXPECT_TRUE(dir.list().empty());
  EXPECT_TRUE(publishRendezvous(dir.path(), secret).ok());
  // Removing twice is not an error.
  EXPECT_TRUE(removeRendezvous(dir.path()).ok());
  EXPECT_TRUE(removeRendezvous(dir.path()).ok());
}

TEST(Rendezvous, RankZeroRefusesALeftOverFile) {
  ScratchDirectory dir;
  ASSERT_TRUE(publishRendezvous(dir.path(), secretOf(128)).ok());
  Status again = publishRendezvous(dir.path(), secretOf(128));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already exists"), std::string::npos)
      << again.error().message;
  EXPECT_NE(again.error().hint.find("remove the file"), std::string::npos);
  // The file is unchanged.
  Expected<std::string> got = awaitRendezvous(dir.path(), 128, 1s);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, secretOf(128));
}

TEST(Rendezvous, MissingDirectoryIsAnError) {
  ScratchDirectory dir;
  Status status = publishRendezvous(dir.file("absent"), "x");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("does not exist"), std::string::npos);
}

TEST(Rendezvous, WaitingRanksTimeOutWithAHint) {
  ScratchDirectory dir;
  auto started = std::chrono::steady_clock::now();
  Expected<std::string> got = awaitRendezvous(dir.path(), 16, 300ms);
  ASSERT_FALSE(got.ok());
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);
  EXPECT_NE(got.error().message.find("did not publish"), std::string::npos)
      << got.error().message;
  EXPECT_NE(got.error().hint.find("AOA_RENDEZVOUS_TIMEOUT"),
            std::string::npos);
}

TEST(Rendezvous, AFileOfTheWrongSizeIsRefused) {
  ScratchDirectory dir;
  aoa::test::writeWholeFile(rendezvousFilePath(dir.path()), "short");
  Expected<std::string> got = awaitRendezvous(dir.path(), 256, 1s);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("holds 5 bytes, not the 256"),
            std::string::npos)
      << got.error().message;
}

} // namespace
