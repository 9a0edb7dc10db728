//===- MpiBackend.h - One rank of a plan per process, over MPI --*- C++ -*-===//
//
// The `mpi` backend (docs/aoa-run.md): `mpirun -np W aoa-run PLAN
// --backend=mpi …` starts one process per rank of the plan (W must be the
// plan's rank count). Each process runs only its own rank's program: reads
// from the source files the plan gives its rank, then per round posts all
// its sends and receives at once (MPI_Isend/MPI_Irecv of the buffers a
// message lists, in place, completed by MPI_Waitall, so no round can
// deadlock), then its copies and its writes (RankRound.h, on a thread pool).
//
// The rest is every backend's life cycle (aoa/runtime/exec/RunLifeCycle.h):
// the ranks agree after every step that can fail (an MPI_Allreduce of a
// failure flag per rank), so a failure on one rank stops every rank at the
// next agreement and none waits for a message that will not come; rank 0
// prepares the shared destination directory, every rank stages, commits and
// journals its own files (DST/.aoa-run/journal.RANK), and rank 0 writes
// metadata.json last, with every tensor's xxh3 gathered from the ranks.
//
// This header does not include mpi.h: the runtime's users never see MPI. A
// build without MPI (AOA_ENABLE_MPI=OFF) has this API too, but
// MpiSession::start() fails with a message that says so.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_MPIBACKEND_H
#define AOA_RUNTIME_BACKENDS_MPIBACKEND_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/RankGroup.h"
#include "aoa/runtime/exec/RankRunResult.h"
#include "aoa/runtime/exec/RunOptions.h"
#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aoa::runtime {

class ProgressMeter;
class RankRound;

/// MPI for the lifetime of an object: initialized when the session starts,
/// finalized when it is destroyed, so a process's MPI lifetime is one scope
/// of the driver. It is the RankGroup of the mpi backend, and of the nccl
/// backend under mpirun: the collectives the driver needs before a run (to
/// agree on a failure, to share the plan's text) and the run's agreements.
class MpiSession final : public RankGroup {
public:
  /// Whether this build has the mpi backend.
  static bool available();

  /// Initializes MPI for this process (only the calling thread will make
  /// MPI calls). Fails when this build has no MPI backend.
  static Expected<std::unique_ptr<MpiSession>> start();
  /// Finalizes MPI.
  ~MpiSession() override;
  MpiSession(const MpiSession &) = delete;
  MpiSession &operator=(const MpiSession &) = delete;

  std::string broadcast(std::string text) const override;
  void sum(std::vector<uint64_t> &values) const override;
  void sumOnHost(std::vector<uint64_t> &values) const override;
  void max(std::vector<uint64_t> &values) const override;
  void bitwiseOrOnRankZero(std::vector<uint64_t> &values) const override;
  void barrier() const override;

  /// MPI objects, for the backend's implementation files (MpiHandles.h).
  struct Handles;
  const Handles &handles() const { return *handles_; }

private:
  MpiSession();
  std::unique_ptr<Handles> handles_;
};

/// Runs this process's rank of `plan` (already read and verified) as
/// described above. Collective: every rank of `session` calls it with the
/// same plan and options. `progress`, given on rank 0, reports the bytes
/// written by all ranks.
RankRunResult runPlanWithMpi(const plan::Plan &plan, const RunOptions &options,
                             const MpiSession &session,
                             ProgressMeter *progress = nullptr);

/// Exchanges `round`'s messages: posts all its sends and receives at once
/// (through one derived datatype per message) and waits for all of them;
/// `address(b)` is where buffer b's bytes are. Adds the bytes received to
/// `received`. A failed message is reported after all of the round's
/// messages have completed, so that no peer is left waiting for one (MPI's
/// own errors abort the job; only the test hook, FaultInjection.h, fails a
/// message today). Used by the mpi backend on its host buffers and by the
/// nccl backend's emulated device, whose memory is host memory.
Status exchangeWithMpi(const MpiSession &session, const RankRound &round,
                       llvm::function_ref<uint8_t *(uint32_t)> address,
                       uint64_t &received);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_MPIBACKEND_H
