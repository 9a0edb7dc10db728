//===- RunDriver.h - What aoa-run does with its parsed flags ----*- C++ -*-===//
//
// Reads and verifies a plan (formats/plan's readers, with located diagnostics),
// picks the backend, runs it with a progress meter, and reports. `local`
// runs every rank in this process; `mpi` runs this process's rank of an
// mpirun job (MPI lives for the call: MpiSession, in
// aoa/runtime/backends/MpiBackend.h): each process reads only its rank's
// section of a binary plan (lib/RunPlanReading.h), rank 0 prints the
// progress and the summary, and every rank prints its own errors prefixed
// with "rank R: ". `nccl` runs this process's rank on a GPU
// (aoa/runtime/backends/NcclBackend.h): the job is MPI's when
// mpirun started it, else RANK / WORLD_SIZE (and LOCAL_RANK picks the GPU)
// with a rendezvous directory. A backend this build or machine lacks is
// refused with a message rather than silently replaced.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_RUNDRIVER_H
#define AOA_DRIVER_RUNDRIVER_H

#include "aoa/runtime/exec/RunOptions.h"

#include <iosfwd>
#include <optional>
#include <string>

namespace aoa {

enum class ProgressStyle { Auto, Bar, Lines, None };

struct RunCommand {
  std::string planPath;
  /// The plan's bytes, text or binary, when it is not read from planPath
  /// (aoa-convert compiles it in memory); planPath then only names it in
  /// messages.
  std::optional<std::string> planText;
  std::string backend = "local"; ///< local, mpi, nccl
  /// nccl without mpirun: where rank 0 leaves the NCCL ids.
  std::string rendezvousDirectory;
  /// nccl: the emulated device (host memory; for tests without a GPU).
  bool emulateDevice = false;
  runtime::RunOptions options;
  ProgressStyle progress = ProgressStyle::Auto;
  bool color = false;
};

/// Runs the command; returns the process exit code (0 on success, 1 on any
/// error, which has then been reported on `err`).
int runPlanCommand(const RunCommand &command, std::ostream &err);

} // namespace aoa

#endif // AOA_DRIVER_RUNDRIVER_H
