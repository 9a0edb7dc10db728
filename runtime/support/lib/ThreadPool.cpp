//===- ThreadPool.cpp -----------------------------------------------------===//
#include "aoa/runtime/support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <optional>

namespace aoa::runtime {

struct ThreadPool::Job {
  size_t count = 0;
  llvm::function_ref<Status(size_t)> task;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  size_t errorIndex = SIZE_MAX;
  std::optional<Error> error;
};

ThreadPool::ThreadPool(unsigned threads) {
  unsigned workers = std::min(threads > 1 ? threads - 1 : 0, kMaxThreads - 1);
  workers_.reserve(workers);
  // The system may refuse threads (limits, memory): the pool then works
  // with those it got; the calling thread always takes part.
  for (unsigned i = 0; i < workers; ++i) {
    try {
      workers_.emplace_back([this] { workerLoop(); });
    } catch (const std::system_error &) {
      break;
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

void ThreadPool::runTasks(Job &job) {
  for (;;) {
    if (job.failed.load(std::memory_order_relaxed))
      return;
    size_t index = job.next.fetch_add(1, std::memory_order_relaxed);
    if (index >= job.count)
      return;
    Status status = job.task(index);
    if (!status.ok()) {
      std::lock_guard<std::mutex> lock(job.errorMutex);
      if (index < job.errorIndex) {
        job.errorIndex = index;
        job.error = status.error();
      }
      job.failed = true;
    }
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    Job *job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || (job_ && generation_ != seen);
      });
      if (stopping_)
        return;
      seen = generation_;
      job = job_;
      ++busyWorkers_;
    }
    runTasks(*job);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busyWorkers_;
    }
    done_.notify_all();
  }
}

Status ThreadPool::parallelFor(size_t count,
                               llvm::function_ref<Status(size_t)> task) {
  if (count == 0)
    return Status();
  Job job;
  job.count = count;
  job.task = task;
  if (count > 1 && !workers_.empty()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
  }
  runTasks(job);
  {
    // Detach the job, then wait for the workers that joined it.
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = nullptr;
    done_.wait(lock, [&] { return busyWorkers_ == 0; });
  }
  if (job.error)
    return *job.error;
  return Status();
}

unsigned defaultThreadCount() {
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware ? hardware : 1;
}

} // namespace aoa::runtime
