//===- RunJournalTest.cpp -------------------------------------------------===//
#include "RunJournal.h"
#include "ScratchDirectory.h"

#include <gtest/gtest.h>

#include <fstream>

namespace aoa::runtime {
namespace {

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(RunJournal, RecordsSurviveReopening) {
  test::ScratchDirectory scratch;
  std::string path = scratch.file("journal");
  {
    auto journal = RunJournal::open(path, 0x1234);
    ASSERT_TRUE(journal.ok()) << journal.error().toString();
    EXPECT_TRUE((*journal)->loaded().empty());
    ASSERT_TRUE((*journal)->record({3, 100, {0xabc, 0x2d06800538d394c2}}).ok());
    ASSERT_TRUE((*journal)->record({0, 7, {}}).ok());
  }
  EXPECT_EQ(readAll(path), "aoa-run-journal 1\nplan 0000000000001234\n"
                           "file 3 size 100 xxh3 0000000000000abc "
                           "2d06800538d394c2\nfile 0 size 7 xxh3\n");
  auto journal = RunJournal::open(path, 0x1234);
  ASSERT_TRUE(journal.ok());
  const std::vector<FinishedFile> &loaded = (*journal)->loaded();
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].file, 3u);
  EXPECT_EQ(loaded[0].size, 100u);
  EXPECT_EQ(loaded[0].tensorHashes,
            (std::vector<uint64_t>{0xabc, 0x2d06800538d394c2}));
  EXPECT_EQ(loaded[1].file, 0u);
  EXPECT_TRUE(loaded[1].tensorHashes.empty());
}

TEST(RunJournal, ATornLastRecordIsDroppedAndCutOff) {
  test::ScratchDirectory scratch;
  std::string path = scratch.file("journal");
  test::writeWholeFile(path, "aoa-run-journal 1\nplan 0000000000000001\n"
                             "file 1 size 5 xxh3\nfile 2 si");
  auto journal = RunJournal::open(path, 1);
  ASSERT_TRUE(journal.ok()) << journal.error().toString();
  ASSERT_EQ((*journal)->loaded().size(), 1u);
  ASSERT_TRUE((*journal)->record({2, 9, {}}).ok());
  EXPECT_EQ(readAll(path), "aoa-run-journal 1\nplan 0000000000000001\n"
                           "file 1 size 5 xxh3\nfile 2 size 9 xxh3\n");
}

TEST(RunJournal, AnotherPlanOrAnotherFileIsRefused) {
  test::ScratchDirectory scratch;
  std::string path = scratch.file("journal");
  ASSERT_TRUE(RunJournal::open(path, 1).ok());
  auto other = RunJournal::open(path, 2);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("belongs to another plan"),
            std::string::npos);
  EXPECT_NE(other.error().hint.find("--restart"), std::string::npos);

  test::writeWholeFile(path, "aoa-run-journal 1\nplan 0000000000000001\n"
                             "file x size 5 xxh3\n");
  auto garbled = RunJournal::open(path, 1);
  ASSERT_FALSE(garbled.ok());
  EXPECT_NE(garbled.error().message.find(":3: not a valid run journal record"),
            std::string::npos)
      << garbled.error().message;

  test::writeWholeFile(path, "something else\n");
  EXPECT_FALSE(RunJournal::open(path, 1).ok());
}

} // namespace
} // namespace aoa::runtime
