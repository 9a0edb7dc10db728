//===- EstimateText.h - aoa-plan estimate's printout ------------*- C++ -*-===//
//
// The estimate (PlanEstimate.h) as text: the cluster's parameters and the
// model's assumptions, a table of rounds (the 20 slowest unless all are
// asked for), per-rank totals, the critical path by resource and the ideal
// lower bound, then memory warnings.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_ANALYSIS_ESTIMATETEXT_H
#define AOA_ANALYSIS_ESTIMATETEXT_H

#include "aoa/analysis/ClusterSpec.h"
#include "aoa/analysis/PlanEstimate.h"
#include "aoa/analysis/PlanTraffic.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace aoa {
namespace analysis {

/// Rounds printed unless all are asked for: the slowest ones.
constexpr size_t kSlowestRoundsShown = 20;

struct EstimateTextOptions {
  /// Names the plan and the cluster spec in the header.
  std::string planName;
  std::string clusterName;
  bool allRounds = false;
};

void printEstimate(const PlanTraffic &traffic, const ClusterSpec &cluster,
                   const PlanEstimate &estimate,
                   const EstimateTextOptions &options, std::ostream &os);

/// The model's assumptions, one a line (the printout and the report show
/// them).
const std::vector<std::string> &estimateAssumptions();

/// The rounds in the order a summary shows them: slowest first (earlier
/// rounds first among equals), at most `limit`.
std::vector<size_t> slowestRounds(const PlanEstimate &estimate, size_t limit);

} // namespace analysis
} // namespace aoa

#endif // AOA_ANALYSIS_ESTIMATETEXT_H
