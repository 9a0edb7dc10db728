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

/// How much of a plan verifyPlan checks.
enum class PlanChecks {
  /// Every rule: the tables and every rank's rounds, the pairing of messages
  /// and the coverage of every destination element. Readers run these.
  All,
  /// The plan-wide rules and the tables (files, paths, stored tensors, added
  /// keys, copied files, the Hugging Face layout), not the programs: what a
  /// compiler checks of the plan it built by default, since the programs
  /// follow from these by construction and every reader checks them again
  /// before any byte moves.
  Tables,
};

/// Reports every violated rule (up to 20 errors) and returns true when there
/// were none.
bool verifyPlan(const plan::Plan &plan, DiagnosticEngine &diags,
                PlanChecks checks = PlanChecks::All);

/// The rules one rank can check alone (a plan read with Plan::onlyRank set,
/// or any plan, of which only rank `rank`'s program is looked at): the
/// tables, that rank's rounds, and the coverage of the destination tensors
/// in the files it owns, which only its writes fill. What spans ranks (the
/// round counts and the pairing of messages) the processes of a run check
/// together (MessagePairing.h's exchangeSignature).
bool verifyPlanRank(const plan::Plan &plan, uint32_t rank,
                    DiagnosticEngine &diags);

} // namespace aoa

#endif // AOA_FORMATS_PLAN_PLANVERIFIER_H
