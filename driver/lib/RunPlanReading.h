//===- RunPlanReading.h - How aoa-run's processes read a plan ---*- C++ -*-===//
//
// The local backend reads and verifies the whole plan. A process of a job
// (mpi, nccl) reads only what its rank needs of a binary plan: the header,
// the shared tables and its own section, straight from the plan file when
// every process can open it, else from rank 0's copy of the bytes; it checks
// its own rank (verifyPlanRank), and the processes check together what spans
// ranks: the same plan, the same round count, every message paired
// (exchangeSignature). A text plan is read and verified whole everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_LIB_RUNPLANREADING_H
#define AOA_DRIVER_LIB_RUNPLANREADING_H

#include "aoa/driver/RunDriver.h"
#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/RankGroup.h"
#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace aoa {

/// "aoa-run: error: …" (with `who`, "aoa-run: rank 2: error: …") and its
/// hint, in one write.
void printRunError(std::ostream &err, const runtime::Error &error,
                   const std::string &who = "");

/// The plan's bytes, text or binary (RunCommand::planText, or the plan
/// file's), or an error.
runtime::Expected<std::string> readPlanFile(const RunCommand &command);

/// Reads and verifies the whole plan held in `bytes`; diagnostics go to
/// `err`.
std::optional<plan::Plan> parsePlan(const RunCommand &command,
                                    std::string_view bytes, std::ostream &err,
                                    binplan::PlanOrigin &origin);

/// What names a plan in a run's journal (RunOptions::planFingerprint): a
/// binary plan's header checksum, which covers every section, or the hash
/// of a text plan's bytes.
uint64_t planFingerprint(std::string_view bytes,
                         const binplan::PlanOrigin &origin);

/// The plan one process of a job runs.
struct JobPlan {
  /// Only this rank's program, unless the plan is text.
  plan::Plan plan;
  binplan::PlanOrigin origin;
  uint64_t fingerprint = 0;
};

/// Collective: reads the plan for this process of `group`. On failure every
/// process returns nullopt; rank 0 prints the diagnostics (another rank
/// prints its own when rank 0's part was sound: a fault in its section).
std::optional<JobPlan> readJobPlan(const RunCommand &command,
                                   const runtime::RankGroup &group,
                                   std::ostream &err);

} // namespace aoa

#endif // AOA_DRIVER_LIB_RUNPLANREADING_H
