//===- NcclRank.h - One process of an nccl job, set up ----------*- C++ -*-===//
//
// What a process of the nccl backend runs on: its MPI session (when mpirun
// started it), its device (a CUDA GPU, or the emulated device), the job's
// group (agreements and totals) and transport (messages). Under mpirun the
// rank and size are MPI's; otherwise RANK and WORLD_SIZE tell them and a
// rendezvous directory joins the processes (NcclJob.h). The GPU is
// LOCAL_RANK when set, else the rank on its host modulo the GPUs it sees.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_NCCLRANK_H
#define AOA_RUNTIME_EXEC_NCCLRANK_H

#include "aoa/runtime/exec/Device.h"
#include "aoa/runtime/exec/DeviceTransport.h"
#include "aoa/runtime/exec/RankGroup.h"
#include "aoa/runtime/support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace aoa::runtime {

class MpiSession;
class NcclJob;

struct NcclRankOptions {
  /// Run on the emulated device (host memory, messages over MPI).
  bool emulateDevice = false;
  /// Without mpirun, for a job of several processes: a directory every
  /// process sees.
  std::string rendezvousDirectory;
  /// Whether a launcher (mpirun, srun) started this process.
  bool underLauncher = false;
};

class NcclRank {
public:
  /// How start() went: `rank` when this process is ready; else `error`
  /// when this process failed (to report, prefixed with `who`), or neither
  /// when another process failed and reported it.
  struct Start {
    std::unique_ptr<NcclRank> rank;
    std::optional<Error> error;
    /// "rank 2: " in a job of several processes, "" otherwise.
    std::string who;
  };

  /// Sets up this process's rank: reads RANK, WORLD_SIZE, LOCAL_RANK and
  /// AOA_RENDEZVOUS_TIMEOUT, starts MPI under a launcher, opens the device
  /// and joins the job's NCCL communicators. Collective over the job.
  static Start start(const NcclRankOptions &options);

  ~NcclRank();
  NcclRank(const NcclRank &) = delete;
  NcclRank &operator=(const NcclRank &) = delete;

  const RankGroup &group() const { return *group_; }
  Device &device() { return *device_; }
  DeviceTransport &transport() { return *transport_; }
  /// How to explain a job of the wrong size.
  const JobLauncher &launcher() const { return launcher_; }

private:
  NcclRank();

  std::unique_ptr<MpiSession> session_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<NcclJob> job_;
  std::unique_ptr<RankGroup> singleGroup_;
  std::unique_ptr<DeviceTransport> hostTransport_;
  const RankGroup *group_ = nullptr;
  DeviceTransport *transport_ = nullptr;
  JobLauncher launcher_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_NCCLRANK_H
