//===- ThreadRankGroup.h - The ranks of a job as threads --------*- C++ -*-===//
//
// Tests of what one process of an mpi or nccl job does run every rank as a
// thread of the test: a SharedJob holds what they share (a barrier, the
// slots of a collective, messages between ranks) and a ThreadRankGroup is
// one rank's view of it, with the collectives of runtime::RankGroup.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_THREADRANKGROUP_H
#define AOA_TEST_UNIT_THREADRANKGROUP_H

#include "aoa/runtime/exec/RankGroup.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace aoa::test {

/// What the ranks of an in-process job share.
struct SharedJob {
  explicit SharedJob(uint32_t size) : size(size), slots(size) {}

  /// Returns when all `size` ranks have called it.
  void barrier() {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t generation = barrierGeneration;
    if (++arrived == size) {
      arrived = 0;
      ++barrierGeneration;
      changed.notify_all();
      return;
    }
    changed.wait(lock, [&] { return barrierGeneration != generation; });
  }

  /// Every rank's `values`, once all have given theirs.
  std::vector<std::vector<uint64_t>>
  gather(uint32_t rank, const std::vector<uint64_t> &values) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      slots[rank] = values;
    }
    barrier();
    std::vector<std::vector<uint64_t>> all;
    {
      std::lock_guard<std::mutex> lock(mutex);
      all = slots;
    }
    barrier(); // nobody overwrites a slot before everyone has read it
    return all;
  }

  /// Messages from one rank to another, in the order they were sent.
  std::map<std::pair<uint32_t, uint32_t>, std::deque<std::vector<uint8_t>>>
      mailboxes;

  uint32_t size;
  std::mutex mutex;
  std::condition_variable changed;
  uint32_t arrived = 0;
  uint64_t barrierGeneration = 0;
  std::vector<std::vector<uint64_t>> slots;
  std::string broadcastText;
};

class ThreadRankGroup final : public runtime::RankGroup {
public:
  ThreadRankGroup(SharedJob &job, uint32_t rank)
      : RankGroup(rank, job.size, rank, job.size), job_(job) {}

  std::string broadcast(std::string text) const override {
    if (rank() == 0) {
      std::lock_guard<std::mutex> lock(job_.mutex);
      job_.broadcastText = text;
    }
    job_.barrier();
    std::string shared;
    {
      std::lock_guard<std::mutex> lock(job_.mutex);
      shared = job_.broadcastText;
    }
    job_.barrier();
    return shared;
  }
  void sum(std::vector<uint64_t> &values) const override {
    reduce(values, [](uint64_t a, uint64_t b) { return a + b; });
  }
  void sumOnHost(std::vector<uint64_t> &values) const override { sum(values); }
  void max(std::vector<uint64_t> &values) const override {
    reduce(values, [](uint64_t a, uint64_t b) { return std::max(a, b); });
  }
  void bitwiseOrOnRankZero(std::vector<uint64_t> &values) const override {
    std::vector<uint64_t> all = values;
    reduce(all, [](uint64_t a, uint64_t b) { return a | b; });
    if (rank() == 0)
      values = all;
  }
  void barrier() const override { job_.barrier(); }

private:
  void reduce(std::vector<uint64_t> &values,
              const std::function<uint64_t(uint64_t, uint64_t)> &op) const {
    std::vector<std::vector<uint64_t>> all = job_.gather(rank(), values);
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = all[0][i];
      for (uint32_t r = 1; r < all.size(); ++r)
        values[i] = op(values[i], all[r][i]);
    }
  }

  SharedJob &job_;
};

/// Runs `rankMain(rank, group)` on a thread per rank of a job of `size`.
inline void runRanksAsThreads(
    uint32_t size,
    const std::function<void(uint32_t, runtime::RankGroup &)> &rankMain) {
  SharedJob job(size);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      ThreadRankGroup group(job, r);
      rankMain(r, group);
    });
  for (std::thread &thread : threads)
    thread.join();
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_THREADRANKGROUP_H
