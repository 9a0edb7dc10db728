//===- PlanReport.h - A plan as one HTML page -------------------*- C++ -*-===//
//
// aoa-plan report (docs/aoa-plan.md): one self-contained page to look at
// before a large conversion runs: the rank x rank traffic matrix as a heat
// map, bytes read, sent, received and written per rank and per round, and,
// with a cluster spec, the estimate's time per round by phase and its
// critical path. Nothing is fetched from the network: inline SVG and CSS
// only, no scripts, fonts or images.
//
// Large plans are aggregated so the page stays small: the matrix and the
// rank charts show nodes (of the spec's ranks_per_node, else 8 ranks) when
// there are more than 64 ranks, and the round charts bins of consecutive
// rounds when there are more than 200.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_ANALYSIS_PLANREPORT_H
#define AOA_ANALYSIS_PLANREPORT_H

#include "aoa/analysis/ClusterSpec.h"
#include "aoa/analysis/PlanEstimate.h"
#include "aoa/analysis/PlanTraffic.h"

#include <iosfwd>
#include <string>

namespace aoa {
namespace analysis {

/// Ranks shown one by one up to this count; nodes beyond it.
constexpr uint32_t kReportMaxRanks = 64;
/// Matrix rows and columns at most (nodes are grouped further beyond it).
constexpr uint32_t kReportMaxMatrixGroups = 128;
/// Round chart bars at most (consecutive rounds are binned beyond it).
constexpr size_t kReportMaxRoundBars = 200;

struct PlanReportInput {
  std::string planName;
  const PlanTraffic *traffic = nullptr;
  /// Both or neither.
  const ClusterSpec *cluster = nullptr;
  const PlanEstimate *estimate = nullptr;
  std::string clusterName;
};

void writePlanReport(const PlanReportInput &input, std::ostream &os);

} // namespace analysis
} // namespace aoa

#endif // AOA_ANALYSIS_PLANREPORT_H
