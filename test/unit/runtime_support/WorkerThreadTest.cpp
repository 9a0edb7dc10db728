//===- WorkerThreadTest.cpp -----------------------------------------------===//
#include "aoa/runtime/support/WorkerThread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using aoa::runtime::WorkerThread;

namespace {

TEST(WorkerThreadTest, RunsEachTaskOnOneOtherThread) {
  WorkerThread worker;
  std::vector<std::thread::id> ran;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) {
    worker.start([&, i] {
      ran.push_back(std::this_thread::get_id());
      order.push_back(i);
    });
    worker.wait(); // what the task wrote is visible after wait()
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(order[size_t(i)], i);
    EXPECT_EQ(ran[size_t(i)], ran[0]); // one thread kept for all tasks
  }
  EXPECT_NE(ran[0], std::this_thread::get_id());
}

TEST(WorkerThreadTest, RunsBesideTheCaller) {
  WorkerThread worker;
  std::atomic<bool> release{false}, started{false};
  worker.start([&] {
    started = true;
    while (!release)
      std::this_thread::yield();
  });
  // start() returned while the task waits for the caller.
  while (!started)
    std::this_thread::yield();
  release = true;
  worker.wait();
}

TEST(WorkerThreadTest, WaitRethrowsWhatTheTaskThrewOnce) {
  WorkerThread worker;
  worker.start([] { throw std::runtime_error("task failed"); });
  try {
    worker.wait();
    FAIL() << "wait() did not rethrow";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "task failed");
  }
  worker.wait(); // nothing more to rethrow
  int value = 0;
  worker.start([&] { value = 7; }); // and it keeps working
  worker.wait();
  EXPECT_EQ(value, 7);
}

TEST(WorkerThreadTest, WaitWithoutATaskReturns) {
  WorkerThread worker;
  worker.wait();
}

TEST(WorkerThreadTest, DestructorWaitsForTheRunningTask) {
  std::atomic<bool> finished{false};
  {
    WorkerThread worker;
    worker.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      finished = true;
    });
  }
  EXPECT_TRUE(finished);
}

} // namespace
