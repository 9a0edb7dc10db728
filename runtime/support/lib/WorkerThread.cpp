//===- WorkerThread.cpp ---------------------------------------------------===//
#include "aoa/runtime/support/WorkerThread.h"

#include <system_error>
#include <utility>

namespace aoa::runtime {

WorkerThread::WorkerThread() {
  try {
    thread_ = std::thread([this] { loop(); });
  } catch (const std::system_error &) {
    // No thread: start() runs each task itself.
  }
}

WorkerThread::~WorkerThread() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !running_; });
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void WorkerThread::start(std::function<void()> task) {
  if (!thread_.joinable()) {
    try {
      task();
    } catch (...) {
      thrown_ = std::current_exception();
    }
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = std::move(task);
    running_ = true;
  }
  changed_.notify_all();
}

void WorkerThread::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !running_; });
  if (std::exception_ptr thrown = std::exchange(thrown_, nullptr))
    std::rethrow_exception(thrown);
}

void WorkerThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || running_; });
    if (stopping_)
      return;
    std::function<void()> task = std::move(task_);
    lock.unlock();
    std::exception_ptr thrown;
    try {
      task();
    } catch (...) {
      thrown = std::current_exception();
    }
    lock.lock();
    thrown_ = thrown;
    running_ = false;
    changed_.notify_all();
  }
}

} // namespace aoa::runtime
