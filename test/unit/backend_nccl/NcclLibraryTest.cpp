//===- NcclLibraryTest.cpp - NCCL loaded at run time ----------------------===//
//
// The nccl backend loads NCCL with dlopen instead of linking it, so that
// the binaries start where NCCL is missing. In a CUDA build NCCL must load
// from the loader path and report its version, and a library that is not
// there, or is not NCCL, must be refused with a message that names it.
// The library is passed explicitly (NcclJob::probeVersion) rather than
// through AOA_NCCL_LIBRARY, so the tests leave the environment alone. In a
// build without CUDA the tests skip.
//
//===----------------------------------------------------------------------===//
#include "NcclJob.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

using namespace aoa::runtime;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

namespace {

/// The tests of a build with the nccl backend.
class NcclLibraryTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!NcclJob::available())
      GTEST_SKIP() << "this build has no nccl backend (AOA_ENABLE_CUDA is OFF)";
  }
};

TEST(NcclLibraryWithoutCudaTest, RefusesToLoad) {
  if (NcclJob::available())
    GTEST_SKIP() << "this build has the nccl backend";
  Expected<std::string> version = NcclJob::version();
  ASSERT_FALSE(version.ok());
  EXPECT_THAT(version.error().message, HasSubstr("no nccl backend"));
  EXPECT_FALSE(NcclJob::probeVersion("libnccl.so.2").ok());
}

TEST_F(NcclLibraryTest, LoadsFromTheLoaderPath) {
  Expected<std::string> version = NcclJob::probeVersion("");
  ASSERT_TRUE(version.ok()) << version.error().toString();
  EXPECT_THAT(*version, MatchesRegex("2\\.[0-9]+\\.[0-9]+"));
}

TEST_F(NcclLibraryTest, ProcessVersionMatchesTheLoaderPath) {
  if (const char *library = std::getenv("AOA_NCCL_LIBRARY");
      library && *library)
    GTEST_SKIP() << "AOA_NCCL_LIBRARY is set";
  Expected<std::string> process = NcclJob::version();
  ASSERT_TRUE(process.ok()) << process.error().toString();
  Expected<std::string> probed = NcclJob::probeVersion("");
  ASSERT_TRUE(probed.ok()) << probed.error().toString();
  EXPECT_EQ(*process, *probed);
  // Loaded once: a second call gives the same answer.
  Expected<std::string> again = NcclJob::version();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *process);
}

TEST_F(NcclLibraryTest, LoadsAnExplicitName) {
  Expected<std::string> version = NcclJob::probeVersion("libnccl.so.2");
  ASSERT_TRUE(version.ok()) << version.error().toString();
  EXPECT_THAT(*version, MatchesRegex("2\\.[0-9]+\\.[0-9]+"));
}

TEST_F(NcclLibraryTest, MissingFileIsNamedAndNotReplaced) {
  // The system's libnccl.so.2 loads here; a wrong explicit path must still
  // fail rather than fall back to it.
  const std::string missing = "/nonexistent/aoa-test/libnccl.so.2";
  Expected<std::string> version = NcclJob::probeVersion(missing);
  ASSERT_FALSE(version.ok()) << "loaded " << *version;
  EXPECT_THAT(version.error().message,
              HasSubstr("AOA_NCCL_LIBRARY=" + missing));
  // dlerror()'s reason.
  EXPECT_THAT(version.error().message, HasSubstr("No such file or directory"));
  EXPECT_THAT(version.error().hint, HasSubstr("AOA_NCCL_LIBRARY"));
  EXPECT_THAT(version.error().hint, HasSubstr("LD_LIBRARY_PATH"));
}

TEST_F(NcclLibraryTest, LibraryWithoutNcclIsRefused) {
  // libm loads everywhere but has no ncclGetVersion.
  Expected<std::string> version = NcclJob::probeVersion("libm.so.6");
  ASSERT_FALSE(version.ok()) << "loaded " << *version;
  EXPECT_THAT(version.error().message, HasSubstr("libm.so.6"));
  EXPECT_THAT(version.error().message,
              HasSubstr("is not NCCL: it has no ncclGetVersion"));
}

} // namespace
