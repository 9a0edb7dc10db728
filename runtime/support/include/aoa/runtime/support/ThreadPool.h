//===- ThreadPool.h - Parallel loops over independent tasks -----*- C++ -*-===//
//
// The executor's phases (reads, copies, writes of a round) are lists of
// independent tasks. parallelFor runs one list on a fixed set of worker
// threads and stops handing out tasks after the first failure, whose error
// it returns (the lowest-numbered failing task that ran, so that messages do
// not depend on timing more than necessary).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SUPPORT_THREADPOOL_H
#define AOA_RUNTIME_SUPPORT_THREADPOOL_H

#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace aoa::runtime {

class ThreadPool {
public:
  /// The most threads a pool runs; tools refuse larger --threads.
  static constexpr unsigned kMaxThreads = 1024;

  /// `threads` workers in all, the calling thread included (at least 1, at
  /// most kMaxThreads; fewer when the system refuses to start more).
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned threadCount() const { return unsigned(workers_.size()) + 1; }

  /// Runs task(0) … task(count - 1), each once, concurrently; returns after
  /// all that started have finished. Not reentrant: a task must not call
  /// parallelFor on the same pool.
  Status parallelFor(size_t count, llvm::function_ref<Status(size_t)> task);

private:
  struct Job;
  void workerLoop();
  static void runTasks(Job &job);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job *job_ = nullptr;       ///< the running parallelFor, if any
  uint64_t generation_ = 0;  ///< counts jobs, so workers join each once
  unsigned busyWorkers_ = 0; ///< workers inside the current job
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

/// A sensible default thread count: the hardware's, at least 1.
unsigned defaultThreadCount();

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SUPPORT_THREADPOOL_H
