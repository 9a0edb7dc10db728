//===- PlanVerifier.h - Checking a plan before it runs ----------*- C++ -*-===//
//
// The semantic rules of a plan (docs/plan-format.md, "Validity"), checked on
// the in-memory model: the reader runs them on every plan it reads (with
// locations), and the compiler or a test can run them on a plan it built
// (diagnostics then name the rank, round and instruction instead).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_PLANVERIFIER_H
#define AOA_FORMATS_PLAN_PLANVERIFIER_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/Plan.h"

namespace aoa {

/// Reports every violated rule (up to 20 errors) and returns true when there
/// were none.
bool verifyPlan(const plan::Plan &plan, DiagnosticEngine &diags);

} // namespace aoa

#endif // AOA_FORMATS_PLAN_PLANVERIFIER_H
