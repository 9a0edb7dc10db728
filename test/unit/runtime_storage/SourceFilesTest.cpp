//===- SourceFilesTest.cpp - Reading the source checkpoint of a plan ------===//
//
// Regions are read right, whether made of a few long runs (pread each) or of
// many short ones (gathered), and a source file that another process
// truncates after SourceFiles opened it gives an error naming the file on
// every path, never SIGBUS (issue 20 C4: the files were once mapped).
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/SourceFiles.h"

#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/support/ThreadPool.h"

#include "ScratchDirectory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

namespace aoa {
namespace {

using runtime::Expected;
using runtime::SourceFiles;
using runtime::Status;
using ::testing::HasSubstr;

constexpr int64_t kRows = 256, kColumns = 1024; // 4 KiB rows of float32

class SourceFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    plan.ranks = 1;
    plan.sourceFiles.push_back(plan::File{"w.safetensors", 0, std::nullopt});
    plan::StoredTensor w;
    w.name = w.key = "w";
    w.dtype = DType::F32;
    w.globalShape = {kRows, kColumns};
    w.box = Box::fromShape(w.globalShape);
    plan.sourceTensors.push_back(w);

    values.resize(size_t(kRows * kColumns));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = float(i);
    auto writer = runtime::SafetensorsWriter::create(
        path(), {runtime::TensorDeclaration{
                    "w", DType::F32,
                    {w.globalShape.begin(), w.globalShape.end()}}});
    ASSERT_TRUE(writer) << writer.error().toString();
    ASSERT_TRUE(writer->writeTensor("w", values.data(),
                                    values.size() * sizeof(float)));
    ASSERT_TRUE(writer->commit());
  }

  std::string path() const { return scratch.file("w.safetensors"); }

  Expected<SourceFiles> open() {
    return SourceFiles::open(plan, scratch.path(), {true}, pool);
  }

  /// The values of `region` of w, row-major.
  std::vector<float> expected(const Box &region) const {
    std::vector<float> out;
    for (int64_t r = region.dim(0).begin; r < region.dim(0).end; ++r)
      for (int64_t c = region.dim(1).begin; c < region.dim(1).end; ++c)
        out.push_back(values[size_t(r * kColumns + c)]);
    return out;
  }

  Status read(const SourceFiles &files, const Box &region,
              std::vector<float> &out) {
    out.assign(size_t(region.volume()), -1.0f);
    return files.readRegion(0, region, out.data(), out.size() * sizeof(float));
  }

  test::ScratchDirectory scratch;
  runtime::ThreadPool pool{2};
  plan::Plan plan;
  std::vector<float> values;
};

Box box(int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  return Box({Interval{r0, r1}, Interval{c0, c1}});
}

TEST_F(SourceFilesTest, ReadsLongAndShortRunRegions) {
  Expected<SourceFiles> files = open();
  ASSERT_TRUE(files) << files.error().toString();
  for (const Box &region : {
           box(3, 70, 0, kColumns), // one run
           box(0, kRows, 8, 12),    // 16-byte runs with 4 KiB gaps: gathered
           box(0, kRows, 1, 2),     // single elements
           box(5, 9, 0, 1000),      // long runs, small gaps
           box(0, kRows, 0, 600),   // spans larger than the window
       }) {
    SCOPED_TRACE(region.toString());
    std::vector<float> out;
    ASSERT_TRUE(read(*files, region, out));
    EXPECT_EQ(out, expected(region));
  }
}

TEST_F(SourceFilesTest, AFileTruncatedAfterItWasOpenedIsAnErrorNamingIt) {
  Expected<SourceFiles> files = open();
  ASSERT_TRUE(files) << files.error().toString();
  // Keep the header and the first quarter of the data.
  ASSERT_EQ(::truncate(path().c_str(), 4096 + kRows * kColumns), 0);
  for (const Box &region : {
           box(kRows - 8, kRows, 0, kColumns), // long runs: pread
           box(0, kRows, 8, 12),               // short runs: gathered
           box(0, kRows, 1, 2),
       }) {
    SCOPED_TRACE(region.toString());
    std::vector<float> out;
    Status status = read(*files, region, out);
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().message, HasSubstr(path() + ": tensor 'w'"));
    EXPECT_THAT(status.error().message,
                HasSubstr("(it was shortened after it was opened)"));
  }
  // A region still inside the file reads as before.
  std::vector<float> out;
  ASSERT_TRUE(read(*files, box(0, 4, 0, kColumns), out));
  EXPECT_EQ(out, expected(box(0, 4, 0, kColumns)));
}

} // namespace
} // namespace aoa
