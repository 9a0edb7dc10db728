//===- RankGroup.h - The processes of a one-rank-per-process run -*- C++ -*-===//
//
// The mpi and nccl backends run one process per rank of a plan. The ranks
// agree after every step that can fail and share a few numbers (totals,
// finished files, hashes); a RankGroup offers exactly those collectives,
// whatever carries them: MPI (MpiBackend.h), NCCL when a job was started
// without mpirun (RANK/WORLD_SIZE and a rendezvous directory), or nothing
// for a job of one process. Every collective must be called by every rank,
// in the same order.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_RANKGROUP_H
#define AOA_RUNTIME_EXEC_RANKGROUP_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aoa::runtime {

class RankGroup {
public:
  virtual ~RankGroup();

  uint32_t rank() const { return rank_; }
  uint32_t size() const { return size_; }
  /// The processes of the job on this process's host, and this one's
  /// position among them.
  uint32_t hostSize() const { return hostSize_; }
  uint32_t hostRank() const { return hostRank_; }

  /// The ranks whose `failed` is true, in increasing order, on every rank.
  std::vector<uint32_t> failedRanks(bool failed) const;
  /// Rank 0's `text` on every rank (the others' argument is ignored).
  virtual std::string broadcast(std::string text) const = 0;
  /// Element-wise sums over all ranks (or only this host's), on every rank.
  virtual void sum(std::vector<uint64_t> &values) const = 0;
  virtual void sumOnHost(std::vector<uint64_t> &values) const = 0;
  /// Element-wise maxima over all ranks, on every rank.
  virtual void max(std::vector<uint64_t> &values) const = 0;
  /// Element-wise bitwise or over all ranks, on rank 0 only (the others'
  /// `values` are left as they were).
  virtual void bitwiseOrOnRankZero(std::vector<uint64_t> &values) const = 0;
  /// Returns when every rank has called it.
  virtual void barrier() const = 0;

protected:
  RankGroup() = default;
  RankGroup(uint32_t rank, uint32_t size, uint32_t hostRank, uint32_t hostSize)
      : rank_(rank), size_(size), hostRank_(hostRank), hostSize_(hostSize) {}
  void setPlace(uint32_t rank, uint32_t size, uint32_t hostRank,
                uint32_t hostSize) {
    rank_ = rank;
    size_ = size;
    hostRank_ = hostRank;
    hostSize_ = hostSize;
  }

private:
  uint32_t rank_ = 0;
  uint32_t size_ = 1;
  uint32_t hostRank_ = 0;
  uint32_t hostSize_ = 1;
};

/// How the job's processes were started, for messages about their number.
struct JobLauncher {
  /// "mpirun started 3 processes" is built from "mpirun started".
  std::string started = "mpirun started";
  /// "run it with mpirun -np 4" is built from "run it with mpirun -np ".
  std::string howToStart = "run it with mpirun -np ";
};

/// The group of a job of one process: every collective is the identity.
std::unique_ptr<RankGroup> makeSingleRankGroup();

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_RANKGROUP_H
