//===- LocalBackend.h - All ranks of a plan in one process ------*- C++ -*-===//
//
// The `local` backend (docs/aoa-run.md): offline conversion on one machine.
// It runs the rounds of all ranks in lock step: a round's reads (all ranks,
// in parallel on a thread pool), then its messages (a receive takes the
// sender's buffer itself, nothing is copied), then its copies, then its
// writes. Buffers of a round live until the round ends, so the run holds at
// most the sum over ranks of each rank's largest round, which it checks
// against the memory limit before any work starts.
//
// The rest of the run (the memory check, the staged destination, which also
// resumes an interrupted run, the source files, install and --verify) is
// every backend's life cycle (aoa/runtime/exec/RunLifeCycle.h), run by a
// group of one process.
//
// A training process may instead take one rank's destination tensors in
// memory it owns (loadRankLocally, the Python module's aoa.load): only the
// source bytes those tensors need are read (other ranks' reads included
// where the rank receives them in messages), and nothing is written to disk.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_LOCALBACKEND_H
#define AOA_RUNTIME_BACKENDS_LOCALBACKEND_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/CallerTensors.h"
#include "aoa/runtime/exec/RunOptions.h"
#include "aoa/runtime/support/Error.h"

namespace aoa::runtime {

class ProgressMeter;

/// Executes `plan` (already read and verified) as described above;
/// `progress`, when given, reports the bytes written.
Expected<RunReport> runPlanLocally(const plan::Plan &plan,
                                   const RunOptions &options,
                                   ProgressMeter *progress = nullptr);

/// Runs what `rank`'s destination tensors need of `plan` (already read and
/// verified) and writes them into `tensors` (the caller's memory; each
/// tensor of the rank's destination files once, with its exact size; see
/// CallerTensors.h) instead of files: no destination directory, journal or
/// metadata.json (options.destinationDirectory is ignored; threads, memory
/// limit and interrupted apply). Nothing is written into `tensors` when
/// they do not match. The report counts the bytes read and written into
/// memory.
Expected<RunReport> loadRankLocally(const plan::Plan &plan,
                                    const RunOptions &options, uint32_t rank,
                                    std::vector<CallerTensor> tensors);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_LOCALBACKEND_H
