//===- MpiSession.h - MPI for the lifetime of an object ---------*- C++ -*-===//
//
// The mpi backend (docs/aoa-run.md) runs one process per rank under mpirun.
// An MpiSession initializes MPI when it starts and finalizes it when it is
// destroyed, so a process's MPI lifetime is one scope of the driver. It also
// offers the few collectives the driver needs before the executor runs (to
// agree on a failure, to share the plan's text): it is the RankGroup of the
// mpi backend, and of the nccl backend under mpirun.
//
// This header does not include mpi.h: the runtime's users never see MPI.
// A build without MPI (AOA_ENABLE_MPI=OFF) has this class too, but start()
// fails with a message that says so.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_MPISESSION_H
#define AOA_RUNTIME_EXEC_MPISESSION_H

#include "aoa/runtime/exec/RankGroup.h"
#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aoa::runtime {

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

  /// MPI objects, for the backend's implementation files.
  struct Handles;
  const Handles &handles() const { return *handles_; }

private:
  MpiSession();
  std::unique_ptr<Handles> handles_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_MPISESSION_H
