//===- PlanReader.h - Reading the plan's text form --------------*- C++ -*-===//
//
// Reads a plan written by writePlanText (PlanWriter.h; docs/plan-format.md).
// Every problem is a located diagnostic (file:line:col) that says what was
// expected and how to fix it; nothing asserts or aborts on bad input.
//
// Reading has two stages:
//  1. syntax, line by line: the header and its version, the order of the
//     sections, ids that count 0, 1, 2, … in every section, rank and round
//     blocks in order, buffers defined once each with dense ids per round,
//     integers in range, well-formed strings, types, boxes and transforms.
//     A bad line is reported and skipped, so one read shows many mistakes.
//  2. when the syntax is clean, verifyPlan (PlanVerifier.h) with every
//     finding pointed at its line and field: ids in range, regions inside
//     the key and the stored tensor, buffer shapes and dtypes, transforms,
//     use before definition, the phase order of a round, and that every
//     receive has its send in the same round (so no round can deadlock).
// Reading stops after 20 errors.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_PLANREADER_H
#define AOA_FORMATS_PLAN_PLANREADER_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/Plan.h"
#include "aoa/ir/SourceManager.h"

#include <optional>
#include <string>
#include <string_view>

namespace aoa {

/// Reads and verifies plan text; `path` names it in diagnostics. On any
/// error reports it and returns nullopt. The text is registered with
/// `sources` so diagnostics can show its lines.
std::optional<plan::Plan> readPlanText(const std::string &path,
                                       std::string_view text,
                                       SourceManager &sources,
                                       DiagnosticEngine &diags);

/// As readPlanText, for the file at `path`.
std::optional<plan::Plan> readPlanFile(const std::string &path,
                                       SourceManager &sources,
                                       DiagnosticEngine &diags);

} // namespace aoa

#endif // AOA_FORMATS_PLAN_PLANREADER_H
