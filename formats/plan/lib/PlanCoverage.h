//===- PlanCoverage.h - What a plan stores and writes, per key --*- C++ -*-===//
//
// The verifier's whole-plan checks of stored tensors and writes, which no
// single line can show wrong:
//   - all stored tensors of one key (per side) agree on its dtype and global
//     shape;
//   - the destination tensors of a key together store every element of its
//     global shape (replicas and overlaps are allowed: each is filled from
//     the source on its own);
//   - the writes into each destination tensor cover its stored elements
//     exactly once (no overlap, no hole).
// aoa-compile runs them before it writes a plan and aoa-run on every plan it
// reads, so an edited plan cannot produce a file with a hole, a doubly
// written region or a key that is only partly stored. Sorting and sweeping
// (BoxOverlap.h) keeps the common, disjoint case near linear; only a key or
// tensor that fails is cut into the missing boxes that the message shows.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_PLANCOVERAGE_H
#define AOA_FORMATS_PLAN_LIB_PLANCOVERAGE_H

#include "PlanSite.h"

#include "aoa/ir/Plan.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace aoa {

struct CoverageFinding {
  PlanSite site;
  std::string message;
  std::string hint;
  /// A second site the finding is about (the first tensor of the key, the
  /// other write), with what to say there.
  std::optional<PlanSite> noteSite;
  std::string note;
};

/// Reports each finding; stops when `report` returns false. The plan must
/// have passed every other check of the verifier (ids, boxes and regions
/// valid), so nothing here is bounds-checked again. With `onlyRank`, the
/// writes checked are that rank's, into the tensors of the files it owns:
/// a rank writes only its own files, so they are all of those tensors'.
void checkPlanCoverage(const plan::Plan &plan,
                       llvm::function_ref<bool(CoverageFinding)> report,
                       std::optional<uint32_t> onlyRank = std::nullopt);

} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_PLANCOVERAGE_H
