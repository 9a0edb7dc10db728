//===- MpiSession.h - MPI for the lifetime of an object ---------*- C++ -*-===//
//
// The mpi backend (DESIGN.md §3.3) runs one process per rank under mpirun.
// An MpiSession initializes MPI when it starts and finalizes it when it is
// destroyed, so a process's MPI lifetime is one scope of the driver. It also
// offers the few collectives the driver needs before the executor runs (to
// agree on a failure, to share the plan's text). Every collective must be
// called by every rank, in the same order.
//
// This header does not include mpi.h: the runtime's users never see MPI.
// A build without MPI (AOA_ENABLE_MPI=OFF) has this class too, but start()
// fails with a message that says so.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_MPISESSION_H
#define AOA_RUNTIME_MPISESSION_H

#include "aoa/runtime/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aoa::runtime {

class MpiSession {
public:
  /// Whether this build has the mpi backend.
  static bool available();

  /// Initializes MPI for this process (only the calling thread will make
  /// MPI calls). Fails when this build has no MPI backend.
  static Expected<std::unique_ptr<MpiSession>> start();
  /// Finalizes MPI.
  ~MpiSession();
  MpiSession(const MpiSession &) = delete;
  MpiSession &operator=(const MpiSession &) = delete;

  uint32_t rank() const { return rank_; }
  uint32_t size() const { return size_; }
  /// The processes of the job on this process's host, and this one's
  /// position among them.
  uint32_t hostSize() const { return hostSize_; }
  uint32_t hostRank() const { return hostRank_; }

  // Collectives.

  /// The ranks whose `failed` is true, in increasing order, on every rank.
  std::vector<uint32_t> failedRanks(bool failed) const;
  /// Rank 0's `text` on every rank (the others' argument is ignored).
  std::string broadcast(std::string text) const;
  /// Element-wise sums over all ranks (or only this host's), on every rank.
  void sum(std::vector<uint64_t> &values) const;
  void sumOnHost(std::vector<uint64_t> &values) const;
  /// Element-wise maxima over all ranks, on every rank.
  void max(std::vector<uint64_t> &values) const;
  /// Element-wise bitwise or over all ranks, on rank 0 only (the others'
  /// `values` are left as they were).
  void bitwiseOrOnRankZero(std::vector<uint64_t> &values) const;
  /// Returns when every rank has called it.
  void barrier() const;

  /// MPI objects, for the backend's implementation files.
  struct Handles;
  const Handles &handles() const { return *handles_; }

private:
  MpiSession();
  std::unique_ptr<Handles> handles_;
  uint32_t rank_ = 0;
  uint32_t size_ = 1;
  uint32_t hostRank_ = 0;
  uint32_t hostSize_ = 1;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_MPISESSION_H
