//===- OutputFileTest.cpp - Outputs appear whole or not at all -------------===//
//
// A plan of hundreds of MB streams through OutputFile: sections written in
// batches, the header last (a seek back to the start), the file sent to disk
// every 16 MiB on the way. The committed file must hold exactly the bytes
// written, and nothing may be left behind when a run fails.
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/OutputFile.h"

#include "ScratchDirectory.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

using namespace aoa;

namespace {

std::string pattern(size_t bytes) {
  std::string text(bytes, '\0');
  uint32_t state = 12345;
  for (char &c : text) {
    state = state * 1103515245u + 12345u;
    c = char(state >> 24);
  }
  return text;
}

TEST(OutputFileTest, ALargeOutputWithItsHeaderWrittenLastCommitsWhole) {
  test::ScratchDirectory dir;
  std::string path = dir.file("plan.bin");
  std::ostringstream unusedStdout;
  std::string error;
  std::optional<OutputFile> out = OutputFile::open(path, unusedStdout, error);
  ASSERT_TRUE(out) << error;
  // 40 MiB (past two write-backs) in uneven pieces, each far larger than
  // the stream's buffer, and a few single bytes.
  std::string body = pattern(40u << 20);
  std::ostream &stream = out->stream();
  stream.write("HEADER??", 8);
  for (size_t at = 8; at < body.size();) {
    if (at % 7 == 0) {
      stream.put(body[at++]);
      continue;
    }
    size_t piece = std::min<size_t>(body.size() - at, 1u << 20 | 12345);
    stream.write(body.data() + at, std::streamsize(piece));
    at += piece;
  }
  std::streampos end = stream.tellp();
  EXPECT_EQ(int64_t(end), int64_t(body.size()));
  stream.seekp(0);
  stream.write("HEADER!!", 8);
  stream.seekp(end);
  ASSERT_TRUE(stream.good());
  EXPECT_EQ(dir.list().size(), 1u); // the temporary only
  EXPECT_FALSE(out->commit());
  std::string expected = "HEADER!!" + body.substr(8);
  EXPECT_EQ(test::readWholeFile(path), expected);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"plan.bin"});
}

TEST(OutputFileTest, AnOutputNeverCommittedLeavesNothing) {
  test::ScratchDirectory dir;
  std::ostringstream unusedStdout;
  std::string error;
  {
    std::optional<OutputFile> out =
        OutputFile::open(dir.file("plan.bin"), unusedStdout, error);
    ASSERT_TRUE(out) << error;
    std::string body = pattern(4u << 20);
    out->stream().write(body.data(), std::streamsize(body.size()));
  }
  EXPECT_TRUE(dir.list().empty());
}

TEST(OutputFileTest, ADirectoryIsRefusedBeforeAnythingIsWritten) {
  test::ScratchDirectory dir;
  std::ostringstream unusedStdout;
  std::string error;
  EXPECT_FALSE(OutputFile::open(dir.path(), unusedStdout, error));
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
}

} // namespace
