//===- PlanToolDriver.h - aoa-plan's commands -------------------*- C++ -*-===//
//
// aoa-plan (docs/aoa-plan.md) reads a plan in either form: `dump` prints its
// text, `summary` the cost table aoa-compile prints, `assemble` writes the
// binary form.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_PLANTOOLDRIVER_H
#define AOA_DRIVER_PLANTOOLDRIVER_H

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace aoa {

enum class PlanToolAction { Dump, Summary, Assemble };

struct PlanToolCommand {
  PlanToolAction action = PlanToolAction::Dump;
  std::string planPath;
  /// Dump: only this rank's block (of a binary plan, only its section is
  /// read).
  std::optional<uint32_t> rank;
  /// "-" is standard output; assemble needs a file.
  std::string outputPath = "-";
  bool color = false;
};

int runPlanTool(const PlanToolCommand &command, std::ostream &out,
                std::ostream &err);

} // namespace aoa

#endif // AOA_DRIVER_PLANTOOLDRIVER_H
