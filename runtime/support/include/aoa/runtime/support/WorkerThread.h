//===- WorkerThread.h - One task at a time beside the caller ----*- C++ -*-===//
//
// A pipeline that works on the next item while the caller uses the last one
// (resolve-shard-sources answers the next chunk of pieces while it binds the
// one before) needs one thread that runs one task at a time. std::async
// would start a thread per task; a thread's allocator heap goes with it, so
// every task would fault in fresh pages for what it allocates. This keeps
// one thread for all the tasks.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SUPPORT_WORKERTHREAD_H
#define AOA_RUNTIME_SUPPORT_WORKERTHREAD_H

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace aoa::runtime {

class WorkerThread {
public:
  /// Starts the thread; if the system refuses one, tasks run in start().
  WorkerThread();
  /// Waits for the running task (dropping what it threw) and stops.
  ~WorkerThread();
  WorkerThread(const WorkerThread &) = delete;
  WorkerThread &operator=(const WorkerThread &) = delete;

  /// Runs `task` on the thread; the task started before must have been
  /// waited for.
  void start(std::function<void()> task);
  /// Waits for the task start() gave, if any; rethrows what it threw.
  void wait();

private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> task_; ///< given, not yet finished
  bool running_ = false;       ///< task_ was given and has not finished
  bool stopping_ = false;
  std::exception_ptr thrown_;
  std::thread thread_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SUPPORT_WORKERTHREAD_H
