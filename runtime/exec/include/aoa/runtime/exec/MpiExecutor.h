//===- MpiExecutor.h - One rank of a plan per process -----------*- C++ -*-===//
//
// The `mpi` backend (docs/aoa-run.md): `mpirun -np W aoa-run PLAN
// --backend=mpi …` starts one process per rank of the plan (W must be the
// plan's rank count). Each process runs only its own rank's program: reads
// from the source files the plan gives its rank, then per round posts all
// its sends and receives at once (MPI_Isend/MPI_Irecv of the buffers a
// message lists, in place, completed by MPI_Waitall, so no round can
// deadlock), then its copies and its writes (RankRound.h, on a thread pool).
//
// The ranks agree after every step that can fail (an MPI_Allreduce of a
// failure flag per rank): before any message of a round is posted, after
// preparing the destination, after opening the files, after installing. So
// a failure on one rank stops every rank at the next agreement, and none
// waits for a message that will not come.
//
// The destination directory is shared by all ranks (one host, or a file
// system all hosts see), with the local backend's rules (DestinationFiles.h):
// rank 0 prepares it first, then every rank stages, commits and journals its
// own files (DST/.aoa-run/journal.RANK); resuming, the ranks agree on the
// set of finished files before computing what is left to do. When every
// rank has finished, each moves its files into DST, and only then does
// rank 0 write metadata.json, with every tensor's xxh3 gathered from the
// ranks. After a failure the staging directory is removed only when no rank
// has a finished file.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_MPIEXECUTOR_H
#define AOA_RUNTIME_EXEC_MPIEXECUTOR_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/RankRunResult.h"
#include "aoa/runtime/exec/RunOptions.h"

namespace aoa::runtime {

class MpiSession;
class ProgressMeter;

/// Runs this process's rank of `plan` (already read and verified) as
/// described above. Collective: every rank of `session` calls it with the
/// same plan and options. `progress`, given on rank 0, reports the bytes
/// written by all ranks.
RankRunResult runPlanWithMpi(const plan::Plan &plan, const RunOptions &options,
                             const MpiSession &session,
                             ProgressMeter *progress = nullptr);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_MPIEXECUTOR_H
