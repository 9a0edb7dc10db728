//===- PlanTraffic.h - The bytes a plan moves -------------------*- C++ -*-===//
//
// What a plan (ir/Plan.h) reads, sends, receives, transforms and writes, per
// rank and per round, and the rank x rank matrix of bytes sent: the input of
// the time model (PlanEstimate.h) and of the HTML report (PlanReport.h).
//
// A plan may have thousands of ranks, most of which talk to few others, and
// ranks with nothing to do: a round keeps only the ranks it gives work to,
// and the matrix only the pairs that exchange bytes.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_ANALYSIS_PLANTRAFFIC_H
#define AOA_ANALYSIS_PLANTRAFFIC_H

#include "aoa/ir/Plan.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace aoa {
namespace analysis {

/// Bytes one rank moves (in a round, or over the plan).
struct RankTraffic {
  int64_t read = 0;
  int64_t sent = 0;
  int64_t received = 0;
  int64_t written = 0;
  /// Bytes transforms produce (the output buffers of copies).
  int64_t copied = 0;
  /// The round's buffers (over the plan: the largest round's).
  int64_t bufferBytes = 0;

  /// Sums the byte counts; keeps the larger bufferBytes.
  void add(const RankTraffic &other);
};

/// One message: the buffers of a send, from the sender's side.
struct Message {
  uint32_t from = 0;
  uint32_t to = 0;
  int64_t bytes = 0;
};

struct RankRoundTraffic {
  uint32_t rank = 0;
  RankTraffic traffic;
};

struct RoundTraffic {
  /// The ranks with instructions in this round, by rank.
  std::vector<RankRoundTraffic> ranks;
  /// Its messages, by sender.
  std::vector<Message> messages;
};

/// Bytes sent from rank (or node) `first` to `second`; pairs that exchange
/// nothing are absent.
using TrafficMatrix = std::map<std::pair<uint32_t, uint32_t>, int64_t>;

struct PlanTraffic {
  uint32_t ranks = 0;
  /// The plan was compiled with --shared-src (plan::SourceAccess::Shared):
  /// its ranks read source files on a file system every rank sees.
  bool sharedSource = false;
  std::vector<RoundTraffic> rounds;
  /// Over the plan, one per rank.
  std::vector<RankTraffic> rankTotals;
  RankTraffic total;
  TrafficMatrix sent;
};

PlanTraffic computePlanTraffic(const plan::Plan &plan);

/// `matrix` with ranks grouped by `ranksPerGroup` (rank r in group
/// r / ranksPerGroup), e.g. into nodes; traffic inside a group is kept on
/// the diagonal.
TrafficMatrix groupMatrix(const TrafficMatrix &matrix, uint32_t ranksPerGroup);

} // namespace analysis
} // namespace aoa

#endif // AOA_ANALYSIS_PLANTRAFFIC_H
