//===- ProgressMeter.h - Bytes done, throughput and ETA ---------*- C++ -*-===//
//
// A conversion of a large checkpoint takes minutes to hours, so aoa-run says
// how far it is. A background thread samples a byte counter that the workers
// advance: on a terminal it redraws one line (a bar, bytes, throughput, ETA)
// a few times a second; otherwise (a log file, CI) it prints a plain line at
// every tenth of the work and at most every 30 seconds.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_PROGRESSMETER_H
#define AOA_RUNTIME_EXEC_PROGRESSMETER_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace aoa::runtime {

class ProgressMeter {
public:
  /// Reports to `out`; `terminal` selects the redrawn line.
  ProgressMeter(std::FILE *out, bool terminal) : out_(out), terminal_(terminal) {}
  ~ProgressMeter() { stop(); }
  ProgressMeter(const ProgressMeter &) = delete;
  ProgressMeter &operator=(const ProgressMeter &) = delete;

  /// Starts reporting `done` (advanced by others) against `total` bytes.
  void start(std::string label, uint64_t total,
             const std::atomic<uint64_t> &done);
  /// The same, for work counted by two counters, reported as their sum
  /// (the mpi backend: this process's bytes, and the other ranks' as of
  /// the last time the ranks agreed).
  void start(std::string label, uint64_t total,
             const std::atomic<uint64_t> &done,
             const std::atomic<uint64_t> &moreDone);
  /// Prints the final line and stops the thread; idempotent.
  void stop();

  /// One report line for `done` of `total` bytes after `seconds`.
  static std::string formatLine(const std::string &label, uint64_t done,
                                uint64_t total, double seconds, bool bar);

private:
  void start(std::string label, uint64_t total,
             const std::atomic<uint64_t> *done,
             const std::atomic<uint64_t> *moreDone);
  void run();
  uint64_t doneNow() const;

  std::FILE *out_;
  bool terminal_;
  std::string label_;
  uint64_t total_ = 0;
  const std::atomic<uint64_t> *done_ = nullptr;
  const std::atomic<uint64_t> *moreDone_ = nullptr;
  std::chrono::steady_clock::time_point started_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_PROGRESSMETER_H
