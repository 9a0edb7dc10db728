//===- PlanFile.h - A plan file in either form ------------------*- C++ -*-===//
//
// aoa-run and aoa-plan read a plan as its text (docs/plan-format.md) or its
// binary container (formats/plan), told apart by the binary form's magic,
// and verify it the same way (verifyPlan, formats/plan) whichever it was.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_PLANFILE_H
#define AOA_DRIVER_PLANFILE_H

#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/Plan.h"
#include "aoa/ir/SourceManager.h"

#include <optional>
#include <string>
#include <string_view>

namespace aoa {

/// Reads and verifies the plan held in `bytes` (read from `path`, which
/// the diagnostics name). `origin`, when given, receives the layout hashes
/// a binary plan records (none for a text plan).
std::optional<plan::Plan> readPlanBytes(const std::string &path,
                                        std::string_view bytes,
                                        SourceManager &sources,
                                        DiagnosticEngine &diags,
                                        binplan::PlanOrigin *origin = nullptr);

/// Whether the file `path` starts with the binary plan's magic (false when it
/// cannot be read): which reader a plan of one rank goes through.
bool isBinaryPlanFile(const std::string &path);

/// Reads the file `path` whole, then as readPlanBytes; `bytes` receives
/// what was read.
std::optional<plan::Plan> readPlanFileAnyForm(const std::string &path,
                                              std::string &bytes,
                                              SourceManager &sources,
                                              DiagnosticEngine &diags,
                                              binplan::PlanOrigin *origin =
                                                  nullptr);

} // namespace aoa

#endif // AOA_DRIVER_PLANFILE_H
