//===- NcclBackend.h - One rank of a plan per process, on a GPU -*- C++ -*-===//
//
// The `nccl` backend (docs/aoa-run.md): one process per rank, each with a
// GPU (or, for testing without one, the emulated device: host memory, its
// messages over MPI). An NcclRank is what a process of the job runs on: its
// MPI session (when mpirun started it), its device, the job's group
// (agreements and totals) and transport (messages). Under mpirun the rank
// and size are MPI's; otherwise RANK and WORLD_SIZE tell them and a
// rendezvous directory joins the processes. The GPU is LOCAL_RANK when set,
// else the rank on its host modulo the GPUs it sees.
//
// A round's data path is the backend's own (lib/DeviceExecutor.h: uploads,
// NCCL messages, strided-copy kernels, downloads, two pipeline slots); the
// rest is every backend's life cycle (aoa/runtime/exec/RunLifeCycle.h).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_NCCLBACKEND_H
#define AOA_RUNTIME_BACKENDS_NCCLBACKEND_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/RankGroup.h"
#include "aoa/runtime/exec/RankRunResult.h"
#include "aoa/runtime/exec/RunOptions.h"
#include "aoa/runtime/support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace aoa::runtime {

class Device;
class DeviceTransport;
class MpiSession;
class NcclJob;
class ProgressMeter;

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

  /// The job's processes: agreements and totals before and during a run.
  const RankGroup &group() const { return *group_; }
  /// The device's name, for messages ("NVIDIA H100 …", "emulated device").
  std::string deviceName() const;

  /// Runs this process's rank of `plan` (already read and verified) on the
  /// device. Collective over the job. `progress`, given on rank 0, reports
  /// the bytes written by all ranks.
  RankRunResult run(const plan::Plan &plan, const RunOptions &options,
                    ProgressMeter *progress = nullptr);

private:
  NcclRank();

  std::unique_ptr<MpiSession> session_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<NcclJob> job_;
  std::unique_ptr<RankGroup> singleGroup_;
  std::unique_ptr<DeviceTransport> hostTransport_;
  const RankGroup *group_ = nullptr;
  DeviceTransport *transport_ = nullptr;
  /// How to explain a job of the wrong size.
  JobLauncher launcher_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_NCCLBACKEND_H
