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
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_LOCALBACKEND_H
#define AOA_RUNTIME_BACKENDS_LOCALBACKEND_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/RunOptions.h"
#include "aoa/runtime/support/Error.h"

namespace aoa::runtime {

class ProgressMeter;

/// Executes `plan` (already read and verified) as described above;
/// `progress`, when given, reports the bytes written.
Expected<RunReport> runPlanLocally(const plan::Plan &plan,
                                   const RunOptions &options,
                                   ProgressMeter *progress = nullptr);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_LOCALBACKEND_H
