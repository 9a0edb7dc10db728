//===- NcclJob.h - The NCCL communicators of an nccl job --------*- C++ -*-===//
//
// The nccl backend's ranks exchange messages with ncclSend/ncclRecv over a
// communicator that every process joins with rank 0's NCCL unique id. The
// id reaches the ranks one of two ways:
//
//  - under mpirun, through MPI (rank 0 broadcasts it); MPI also carries the
//    agreements and totals (the job's RankGroup is the MpiSession);
//  - otherwise each process is told its RANK and the WORLD_SIZE and all of
//    them see one rendezvous directory (Rendezvous.h); a second NCCL
//    communicator, with its own stream, then carries the agreements, and
//    a third one (split by host) the memory checks of each host.
//
// Messages are queued on the device's transfer stream; after a failure the
// message communicator can be aborted without touching the other one, so
// the ranks can still agree on how to clean up.
//
// This header does not include nccl.h. In a build without CUDA, start()
// fails with a message that says so.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_NCCL_LIB_NCCLJOB_H
#define AOA_RUNTIME_BACKENDS_NCCL_LIB_NCCLJOB_H

#include "DeviceTransport.h"
#include "aoa/runtime/exec/RankGroup.h"
#include "aoa/runtime/support/Error.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace aoa::runtime {

class Device;
class MpiSession;

struct NcclBootstrap {
  /// The MPI job this process is part of (started by mpirun), or null.
  const MpiSession *mpi = nullptr;
  /// Without MPI: this process's rank and the job's process count (RANK,
  /// WORLD_SIZE), and a directory every rank sees (for WORLD_SIZE > 1).
  uint32_t rank = 0;
  uint32_t size = 1;
  std::string rendezvousDirectory;
  /// How long ranks other than 0 wait for rank 0's ids.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

class NcclJob {
public:
  /// Whether this build has NCCL (AOA_ENABLE_CUDA).
  static bool available();
  /// The version of the NCCL this process runs with ("2.28.9"). NCCL is
  /// loaded at run time, once, from $AOA_NCCL_LIBRARY or else libnccl.so.2
  /// on the loader path; fails, saying what was tried and why, where it
  /// cannot be loaded or lacks a function the backend calls.
  static Expected<std::string> version();
  /// As version(), but loads NCCL afresh with `library` in place of
  /// $AOA_NCCL_LIBRARY ("": as if unset), apart from the process's NCCL.
  static Expected<std::string> probeVersion(const std::string &library);

  /// Joins the job's communicators on `device` (a CUDA device, already
  /// current). Collective over the job's processes.
  static Expected<std::unique_ptr<NcclJob>> start(const NcclBootstrap &bootstrap,
                                                  Device &device);
  ~NcclJob();
  NcclJob(const NcclJob &) = delete;
  NcclJob &operator=(const NcclJob &) = delete;

  /// Agreements and totals: MPI under mpirun, NCCL otherwise.
  const RankGroup &group() const { return *group_; }
  /// ncclSend/ncclRecv of a round's messages.
  DeviceTransport &transport() { return *transport_; }

  struct Handles;

private:
  NcclJob();
  std::unique_ptr<Handles> handles_;
  const RankGroup *group_ = nullptr;
  std::unique_ptr<RankGroup> ownGroup_;
  std::unique_ptr<DeviceTransport> transport_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_NCCL_LIB_NCCLJOB_H
