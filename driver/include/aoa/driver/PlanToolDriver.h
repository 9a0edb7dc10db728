//===- PlanToolDriver.h - aoa-plan's commands -------------------*- C++ -*-===//
//
// aoa-plan (docs/aoa-plan.md) reads a plan in either form: `dump` prints its
// text, `summary` the cost table aoa-compile prints, `assemble` writes the
// binary form, `estimate` predicts its time on a cluster and `report`
// writes an HTML page of its traffic (analysis/).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_PLANTOOLDRIVER_H
#define AOA_DRIVER_PLANTOOLDRIVER_H

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace aoa {

enum class PlanToolAction { Dump, Summary, Assemble, Estimate, Report };

struct PlanToolCommand {
  PlanToolAction action = PlanToolAction::Dump;
  std::string planPath;
  /// Dump: only this rank's block (of a binary plan, only its section is
  /// read).
  std::optional<uint32_t> rank;
  /// "-" is standard output; assemble and report need a file.
  std::string outputPath = "-";
  /// Estimate (required): the cluster spec; report (optional): the spec
  /// of the estimate the page shows.
  std::optional<std::string> clusterPath;
  /// Estimate: every round, not only the slowest.
  bool allRounds = false;
  bool color = false;
};

int runPlanTool(const PlanToolCommand &command, std::ostream &out,
                std::ostream &err);

} // namespace aoa

#endif // AOA_DRIVER_PLANTOOLDRIVER_H
