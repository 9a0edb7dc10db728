//===- PlanSummary.h - What a plan will cost, before it runs ----*- C++ -*-===//
//
// A table for people (aoa-compile prints it before any byte moves): ranks,
// rounds and instructions, and per rank the bytes read, sent, received and
// written and the peak buffer memory of a round, with totals; the memory
// budget, with the ranks whose peak exceeds it flagged (an indivisible
// transfer larger than the budget); what moving everything to everyone
// would cost instead; and, for a plan compiled with --shared-src, that every
// rank must see every source file. Sizes are shown in KiB/MiB/GiB with exact
// byte counts.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_PLANSUMMARY_H
#define AOA_FORMATS_PLAN_PLANSUMMARY_H

#include "aoa/ir/ByteSize.h"
#include "aoa/ir/Plan.h"

#include <cstdint>
#include <iosfwd>
#include <string>

namespace aoa {

/// Prints the summary. `broadcastBytes` is the network traffic of a
/// broadcast-everything approach (every source byte sent to every other
/// rank), for comparison; a negative value leaves that line out.
void printPlanSummary(const plan::Plan &plan, std::ostream &os,
                      int64_t broadcastBytes);


} // namespace aoa

#endif // AOA_FORMATS_PLAN_PLANSUMMARY_H
