//===- EstimateText.cpp - aoa-plan estimate's printout --------------------===//
//
// Tables are as wide as their widest cell, first column left-aligned, the
// others right-aligned, as aoa-plan summary prints its table.
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/EstimateText.h"

#include "Units.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <ostream>

namespace aoa {
namespace analysis {

namespace {

class Table {
public:
  /// Column `column` and those after it are left-aligned (free text).
  explicit Table(size_t textFrom = SIZE_MAX) : textFrom_(textFrom) {}
  void row(std::vector<std::string> cells) {
    rows_.push_back(std::move(cells));
  }
  void print(std::ostream &os, const std::string &indent = "") const {
    std::vector<size_t> widths;
    for (const auto &cells : rows_) {
      widths.resize(std::max(widths.size(), cells.size()), 0);
      for (size_t c = 0; c < cells.size(); ++c)
        widths[c] = std::max(widths[c], cells[c].size());
    }
    for (const auto &cells : rows_) {
      std::string line = indent;
      for (size_t c = 0; c < cells.size(); ++c) {
        std::string pad(widths[c] - cells[c].size(), ' ');
        bool left = c == 0 || c >= textFrom_;
        line += (c == 0 ? "" : "  ") + (left ? cells[c] + pad : pad + cells[c]);
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      os << line << '\n';
    }
  }

private:
  size_t textFrom_;
  std::vector<std::vector<std::string>> rows_;
};

std::string percent(double part, double whole) {
  char text[16];
  std::snprintf(text, sizeof(text), "%.1f%%",
                whole > 0 ? 100 * part / whole : 0.0);
  return text;
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void printCluster(const ClusterSpec &cluster, uint32_t ranks,
                  const EstimateTextOptions &options, std::ostream &os) {
  os << "cluster (" << options.clusterName << "):\n";
  Table table(2);
  table.row({"ranks_per_node", std::to_string(cluster.ranksPerNode),
             "rank r runs on node r / ranks_per_node (" +
                 plural(cluster.nodesFor(ranks), "node") + ")"});
  table.row({"disk_read_GBps", formatNumber(cluster.diskReadGBps),
             "a node's disk reads, shared by its ranks"});
  table.row({"disk_write_GBps", formatNumber(cluster.diskWriteGBps),
             "a node's disk writes, shared by its ranks"});
  table.row({"nic_GBps", formatNumber(cluster.nicGBps),
             "a node's network per direction, shared by its ranks' messages "
             "to and from other nodes"});
  table.row({"nvlink_GBps", formatNumber(cluster.nvlinkGBps),
             "a rank's link per direction to the ranks of its node"});
  table.row({"copy_GBps", formatNumber(cluster.copyGBps),
             "a rank's transforms (bytes they produce)"});
  table.row(
      {"memory_per_rank_GiB",
       cluster.memoryPerRankGiB ? formatNumber(*cluster.memoryPerRankGiB) : "-",
       cluster.memoryPerRankGiB ? "a round's buffers on a rank"
                                : "not given: buffers not checked"});
  table.row(
      {"shared_fs_read_GBps",
       cluster.sharedFsReadGBps ? formatNumber(*cluster.sharedFsReadGBps) : "-",
       cluster.sharedFsReadGBps
           ? "a file system every node sees, all nodes together: a "
             "--shared-src plan reads its sources there"
           : "not given: a --shared-src plan reads from the node disks"});
  table.print(os, "  ");
}

void printRounds(const PlanEstimate &estimate, bool allRounds,
                 std::ostream &os) {
  size_t count = estimate.rounds.size();
  std::vector<size_t> shown;
  if (allRounds || count <= kSlowestRoundsShown) {
    shown.resize(count);
    std::iota(shown.begin(), shown.end(), 0);
    os << "rounds (" << (count == 1 ? "1" : "all " + std::to_string(count))
       << "):\n";
  } else {
    shown = slowestRounds(estimate, kSlowestRoundsShown);
    os << "rounds (the " << kSlowestRoundsShown << " slowest of " << count
       << ", slowest first; --all-rounds prints all):\n";
  }
  Table table(6);
  table.row({"round", "time", "read", "exchange", "copy", "write", "bound",
             "critical rank"});
  for (size_t r : shown) {
    const RoundEstimate &round = estimate.rounds[r];
    std::vector<std::string> cells = {std::to_string(r),
                                      formatSeconds(round.seconds)};
    for (const PhaseEstimate &phase : round.phases)
      cells.push_back(formatSeconds(phase.seconds));
    const PhaseEstimate &longest = round.longestPhase();
    cells.push_back(longest.bound.describe());
    cells.push_back(longest.criticalRank ? std::to_string(*longest.criticalRank)
                                         : "-");
    table.row(std::move(cells));
  }
  std::vector<std::string> total = {"total", formatSeconds(estimate.seconds)};
  for (double seconds : estimate.phaseSeconds)
    total.push_back(formatSeconds(seconds));
  table.row(std::move(total));
  table.print(os, "  ");
}

void printRanks(const PlanTraffic &traffic, const ClusterSpec &cluster,
                const PlanEstimate &estimate, std::ostream &os) {
  os << "ranks (busy: until the rank's own part of each phase is done):\n";
  Table table;
  table.row({"rank", "node", "read", "sent", "received", "written", "copied",
             "busy", "critical in"});
  for (uint32_t rank = 0; rank < traffic.ranks; ++rank) {
    const RankTraffic &t = traffic.rankTotals[rank];
    const RankEstimate &e = estimate.ranks[rank];
    table.row({std::to_string(rank), std::to_string(cluster.nodeOf(rank)),
               formatBytes(t.read), formatBytes(t.sent),
               formatBytes(t.received), formatBytes(t.written),
               formatBytes(t.copied),
               formatSeconds(e.busySeconds) + " (" +
                   percent(e.busySeconds, estimate.seconds) + ")",
               plural(e.criticalRounds, "round")});
  }
  table.print(os, "  ");
}

void printCriticalPath(const ClusterSpec &cluster, const PlanEstimate &estimate,
                       std::ostream &os) {
  os << "critical path: " << formatSeconds(estimate.seconds) << " over "
     << plural(estimate.rounds.size(), "round")
     << " (each phase's time, by the resource that bounds it):\n";
  std::vector<size_t> kinds;
  for (size_t k = 1; k < kResourceKindCount; ++k)
    if (estimate.boundSeconds[k] > 0)
      kinds.push_back(k);
  std::stable_sort(kinds.begin(), kinds.end(), [&](size_t a, size_t b) {
    return estimate.boundSeconds[a] > estimate.boundSeconds[b];
  });
  Table table;
  for (size_t k : kinds)
    table.row({resourceKindName(static_cast<ResourceKind>(k)),
               formatSeconds(estimate.boundSeconds[k]),
               percent(estimate.boundSeconds[k], estimate.seconds)});
  table.print(os, "  ");
  if (!kinds.empty()) {
    size_t slowest = slowestRounds(estimate, 1).front();
    const PhaseEstimate &phase = estimate.rounds[slowest].longestPhase();
    os << "bound: "
       << resourceKindName(static_cast<ResourceKind>(kinds.front())) << " ("
       << percent(estimate.boundSeconds[kinds.front()], estimate.seconds)
       << " of the time); the slowest round, " << slowest << " ("
       << formatSeconds(estimate.rounds[slowest].seconds) << "), is bound by "
       << phase.bound.describe() << " in its "
       << phaseName(estimate.rounds[slowest].longest) << " phase\n";
  }
  if (estimate.ideal.resource.kind == ResourceKind::None) {
    os << "ideal lower bound: 0 s (the plan moves no bytes)\n";
    return;
  }
  char ratio[32];
  std::snprintf(ratio, sizeof(ratio), "%.2fx",
                estimate.seconds / estimate.ideal.seconds);
  os << "ideal lower bound: " << formatSeconds(estimate.ideal.seconds) << " ("
     << estimate.ideal.resource.describe() << ": "
     << formatBytes(estimate.ideal.bytes) << " at "
     << formatNumber(bandwidth(cluster, estimate.ideal.resource.kind) / 1e9)
     << " GB/s); the estimate is " << ratio << " of it\n";
}

void printMemoryWarnings(const ClusterSpec &cluster,
                         const PlanEstimate &estimate, std::ostream &os) {
  const size_t shown = 10;
  for (size_t i = 0; i < estimate.memoryWarnings.size() && i < shown; ++i) {
    const MemoryWarning &w = estimate.memoryWarnings[i];
    os << "warning: round " << w.round << ": rank " << w.rank
       << "'s buffers take " << formatBytes(w.bufferBytes)
       << ", more than memory_per_rank_GiB ("
       << formatNumber(*cluster.memoryPerRankGiB) << " GiB)\n";
  }
  if (estimate.memoryWarnings.size() > shown)
    os << "warning: " << estimate.memoryWarnings.size() - shown
       << " more rounds of ranks over memory_per_rank_GiB\n";
  if (!estimate.memoryWarnings.empty())
    os << "hint: compile with a smaller --memory-budget (aoa-compile) to cut "
          "the work into more rounds\n";
}

} // namespace

const std::vector<std::string> &estimateAssumptions() {
  static const std::vector<std::string> lines = {
      "rank r runs on node r / ranks_per_node; GB = 10^9 bytes",
      "a round's phases run one after another (read, exchange, copy, "
      "write), each ending when its slowest rank ends; the plan's time is "
      "the sum of its rounds'",
      "a phase lasts as long as its most loaded resource needs: bytes / "
      "bandwidth",
      "a node's disk is shared by its ranks; a message inside a node uses "
      "the NVLink of both ranks, one between nodes the NIC of both nodes "
      "(per direction, shared by each node's ranks)",
      "shared resources serve their users at equal shares; no latency, no "
      "overlap of phases or rounds",
  };
  return lines;
}

std::vector<size_t> slowestRounds(const PlanEstimate &estimate, size_t limit) {
  std::vector<size_t> order(estimate.rounds.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return estimate.rounds[a].seconds > estimate.rounds[b].seconds;
  });
  if (order.size() > limit)
    order.resize(limit);
  return order;
}

void printEstimate(const PlanTraffic &traffic, const ClusterSpec &cluster,
                   const PlanEstimate &estimate,
                   const EstimateTextOptions &options, std::ostream &os) {
  os << "estimate of " << options.planName << ": "
     << plural(traffic.ranks, "rank") << " on "
     << plural(cluster.nodesFor(traffic.ranks), "node") << ", "
     << plural(traffic.rounds.size(), "round") << "; predicted time "
     << formatSeconds(estimate.seconds) << "\n";
  printCluster(cluster, traffic.ranks, options, os);
  if (traffic.sharedSource)
    os << (cluster.sharedFsReadGBps
               ? "note: the plan was compiled with --shared-src: its reads "
                 "come from the shared file system, through each node's NIC\n"
               : "note: the plan was compiled with --shared-src, and the "
                 "cluster gives no shared_fs_read_GBps: its reads are "
                 "charged to the node disks, as on one host; give "
                 "shared_fs_read_GBps to model a shared file system\n");
  os << "model:\n";
  for (const std::string &line : estimateAssumptions())
    os << "  - " << line << "\n";
  printRounds(estimate, options.allRounds, os);
  printRanks(traffic, cluster, estimate, os);
  printCriticalPath(cluster, estimate, os);
  printMemoryWarnings(cluster, estimate, os);
}

} // namespace analysis
} // namespace aoa
