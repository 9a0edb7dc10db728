//===- PlanWriter.h - The plan's text form ----------------------*- C++ -*-===//
//
// Writes a plan (ir/Plan.h) in its versioned text form, `aoa-plan 3`
// (docs/plan-format.md): the global facts, the files and stored tensors, the
// added keys, then every rank's rounds with one instruction per line, e.g.
//
//   %0 = read src 5 [0:8, 2:4] : bfloat16[8, 2]
//   send 1 %0
//   %1, %2 = recv 1 : bfloat16[8, 2], float32[16]
//   %3 = copy %1 ["[1, 0]", "float32"] : float32[2, 8]
//   write dst 7 [0:2, 0:8] %3
//
// The text is a pure function of the plan (same plan, same bytes), and every
// buffer is declared with its dtype and shape where it is defined, so
// readPlanText (PlanReader.h) gives back an equal plan.
//
// The writer prints what it is given and never fails on an invalid plan (it
// is also a debugging aid): an instruction naming a buffer its round does not
// declare prints the type `<undeclared>`, which the reader rejects. Use
// verifyPlan (PlanVerifier.h) to check a plan.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_PLANWRITER_H
#define AOA_FORMATS_PLAN_PLANWRITER_H

#include "aoa/ir/Plan.h"

#include <iosfwd>
#include <string>

namespace aoa {

/// Streams the plan's text; check the stream's state for I/O errors.
void writePlanText(const plan::Plan &plan, std::ostream &os);

/// The plan's text as one string (for tests and small plans).
std::string printPlanText(const plan::Plan &plan);

} // namespace aoa

#endif // AOA_FORMATS_PLAN_PLANWRITER_H
