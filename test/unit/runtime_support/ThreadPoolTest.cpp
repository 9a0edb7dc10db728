//===- ThreadPoolTest.cpp -------------------------------------------------===//
#include "aoa/runtime/support/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace aoa::runtime {
namespace {

TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  for (unsigned threads : {1u, 2u, 7u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threadCount(), threads);
    for (size_t count : {0u, 1u, 5u, 1000u}) {
      std::vector<std::atomic<int>> runs(count);
      Status status = pool.parallelFor(count, [&](size_t i) {
        ++runs[i];
        return Status();
      });
      EXPECT_TRUE(status.ok());
      for (size_t i = 0; i < count; ++i)
        EXPECT_EQ(runs[i].load(), 1) << "task " << i << " of " << count;
    }
  }
}

// Issue: --threads=100000 aborted with an uncaught std::system_error.
TEST(ThreadPool, AHugeCountIsCappedAndStillRunsEveryTask) {
  ThreadPool pool(100000);
  EXPECT_GE(pool.threadCount(), 1u);
  EXPECT_LE(pool.threadCount(), ThreadPool::kMaxThreads);
  std::vector<std::atomic<int>> runs(5000);
  Status status = pool.parallelFor(runs.size(), [&](size_t i) {
    ++runs[i];
    return Status();
  });
  EXPECT_TRUE(status.ok());
  for (size_t i = 0; i < runs.size(); ++i)
    EXPECT_EQ(runs[i].load(), 1) << "task " << i;
}

TEST(ThreadPool, ReturnsAFailureAndStopsHandingOutTasks) {
  ThreadPool pool(4);
  std::atomic<size_t> started{0};
  Status status = pool.parallelFor(100000, [&](size_t i) -> Status {
    ++started;
    if (i == 10)
      return Error{"task 10 failed", "a hint"};
    return Status();
  });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "task 10 failed");
  EXPECT_EQ(status.error().hint, "a hint");
  EXPECT_LT(started.load(), 100000u);
  // The pool is still usable after a failure.
  std::atomic<size_t> ran{0};
  EXPECT_TRUE(pool.parallelFor(64, [&](size_t) {
                    ++ran;
                    return Status();
                  }).ok());
  EXPECT_EQ(ran.load(), 64u);
}

TEST(ThreadPool, ReportsTheLowestFailingTaskWhenAllFail) {
  ThreadPool pool(1);
  Status status = pool.parallelFor(5, [&](size_t i) -> Status {
    return Error{"task " + std::to_string(i), ""};
  });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "task 0");
}

} // namespace
} // namespace aoa::runtime
