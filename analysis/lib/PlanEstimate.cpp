//===- PlanEstimate.cpp - How long a plan takes on a cluster --------------===//
//
// Every phase of every round is solved the same way: gather, for each
// resource, the bytes each rank puts on it; the phase lasts as long as the
// most loaded resource needs. With equal shares a resource's users finish in
// the order of their bytes, the largest last at load / bandwidth, so each
// rank's own finish is known too (its busy time).
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/PlanEstimate.h"

#include <algorithm>
#include <map>

namespace aoa {
namespace analysis {

const char *phaseName(Phase phase) {
  switch (phase) {
  case Phase::Read:
    return "read";
  case Phase::Exchange:
    return "exchange";
  case Phase::Copy:
    return "copy";
  case Phase::Write:
    return "write";
  }
  return "?";
}

const char *resourceKindName(ResourceKind kind) {
  switch (kind) {
  case ResourceKind::None:
    return "nothing";
  case ResourceKind::DiskRead:
    return "disk read";
  case ResourceKind::DiskWrite:
    return "disk write";
  case ResourceKind::NicSend:
    return "NIC (send)";
  case ResourceKind::NicReceive:
    return "NIC (receive)";
  case ResourceKind::NvlinkSend:
    return "NVLink (send)";
  case ResourceKind::NvlinkReceive:
    return "NVLink (receive)";
  case ResourceKind::Copy:
    return "copies";
  case ResourceKind::SharedFsRead:
    return "shared file system";
  }
  return "?";
}

std::string Resource::describe() const {
  std::string node = "node " + std::to_string(index);
  std::string rank = "rank " + std::to_string(index);
  switch (kind) {
  case ResourceKind::None:
    return "nothing";
  case ResourceKind::DiskRead:
    return "disk read of " + node;
  case ResourceKind::DiskWrite:
    return "disk write of " + node;
  case ResourceKind::NicSend:
    return "NIC of " + node + " (send)";
  case ResourceKind::NicReceive:
    return "NIC of " + node + " (receive)";
  case ResourceKind::NvlinkSend:
    return "NVLink of " + rank + " (send)";
  case ResourceKind::NvlinkReceive:
    return "NVLink of " + rank + " (receive)";
  case ResourceKind::Copy:
    return "copies of " + rank;
  case ResourceKind::SharedFsRead:
    return "reads of the shared file system";
  }
  return "?";
}

double bandwidth(const ClusterSpec &cluster, ResourceKind kind) {
  constexpr double kGB = 1e9;
  switch (kind) {
  case ResourceKind::DiskRead:
    return cluster.diskReadGBps * kGB;
  case ResourceKind::DiskWrite:
    return cluster.diskWriteGBps * kGB;
  case ResourceKind::NicSend:
  case ResourceKind::NicReceive:
    return cluster.nicGBps * kGB;
  case ResourceKind::NvlinkSend:
  case ResourceKind::NvlinkReceive:
    return cluster.nvlinkGBps * kGB;
  case ResourceKind::Copy:
    return cluster.copyGBps * kGB;
  case ResourceKind::SharedFsRead:
    return cluster.sharedFsReadGBps.value_or(0) * kGB;
  case ResourceKind::None:
    break;
  }
  return 1;
}

namespace {

/// Bytes each rank puts on each resource in one phase.
using PhaseLoads = std::map<Resource, std::map<uint32_t, int64_t>>;

/// The resources of a phase and what each rank puts on them, from one
/// round's traffic.
PhaseLoads phaseLoads(Phase phase, const RoundTraffic &round,
                      const ClusterSpec &cluster, bool sharedSource) {
  PhaseLoads loads;
  auto add = [&](ResourceKind kind, uint32_t index, uint32_t rank,
                 int64_t bytes) {
    if (bytes > 0)
      loads[Resource{kind, index}][rank] += bytes;
  };
  switch (phase) {
  case Phase::Read:
    for (const RankRoundTraffic &rank : round.ranks) {
      if (!sharedSource || !cluster.sharedFsReadGBps) {
        add(ResourceKind::DiskRead, cluster.nodeOf(rank.rank), rank.rank,
            rank.traffic.read);
        continue;
      }
      add(ResourceKind::SharedFsRead, 0, rank.rank, rank.traffic.read);
      add(ResourceKind::NicReceive, cluster.nodeOf(rank.rank), rank.rank,
          rank.traffic.read);
    }
    break;
  case Phase::Exchange:
    for (const Message &message : round.messages) {
      uint32_t fromNode = cluster.nodeOf(message.from);
      uint32_t toNode = cluster.nodeOf(message.to);
      if (message.from == message.to)
        continue;
      if (fromNode == toNode) {
        add(ResourceKind::NvlinkSend, message.from, message.from,
            message.bytes);
        add(ResourceKind::NvlinkReceive, message.to, message.to, message.bytes);
      } else {
        add(ResourceKind::NicSend, fromNode, message.from, message.bytes);
        add(ResourceKind::NicReceive, toNode, message.to, message.bytes);
      }
    }
    break;
  case Phase::Copy:
    for (const RankRoundTraffic &rank : round.ranks)
      add(ResourceKind::Copy, rank.rank, rank.rank, rank.traffic.copied);
    break;
  case Phase::Write:
    for (const RankRoundTraffic &rank : round.ranks)
      add(ResourceKind::DiskWrite, cluster.nodeOf(rank.rank), rank.rank,
          rank.traffic.written);
    break;
  }
  return loads;
}

/// Solves one phase: its time, bound and critical rank; adds each rank's
/// finish (the latest over the resources it uses) to `finish`, and each
/// resource's bytes to `totals`.
PhaseEstimate solvePhase(const PhaseLoads &loads, const ClusterSpec &cluster,
                         std::map<uint32_t, double> &finish,
                         std::map<Resource, int64_t> &totals) {
  PhaseEstimate out;
  for (const auto &[resource, users] : loads) {
    double rate = bandwidth(cluster, resource.kind);
    // Equal shares: sorted by bytes, user i (of k) finishes once the
    // users before it are done and it has moved its own bytes alongside
    // the k - i still running.
    std::vector<std::pair<int64_t, uint32_t>> sorted;
    int64_t load = 0;
    for (const auto &[rank, bytes] : users) {
      sorted.emplace_back(bytes, rank);
      load += bytes;
    }
    std::sort(sorted.begin(), sorted.end());
    int64_t before = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      int64_t bytes = sorted[i].first;
      double done = double(before + int64_t(sorted.size() - i) * bytes) / rate;
      double &rankFinish = finish[sorted[i].second];
      rankFinish = std::max(rankFinish, done);
      before += bytes;
    }
    totals[resource] += load;
    double seconds = double(load) / rate;
    if (seconds > out.seconds) {
      out.seconds = seconds;
      out.bound = resource;
      out.boundBytes = load;
      // The largest user; on a tie the lowest rank (sorted ascending by
      // bytes, then rank, so the first of the largest).
      int64_t largest = sorted.back().first;
      auto first =
          std::find_if(sorted.begin(), sorted.end(),
                       [&](const auto &u) { return u.first == largest; });
      out.criticalRank = first->second;
    }
  }
  return out;
}

} // namespace

PlanEstimate estimatePlan(const PlanTraffic &traffic,
                          const ClusterSpec &cluster) {
  PlanEstimate out;
  out.ranks.resize(traffic.ranks);
  out.rounds.resize(traffic.rounds.size());
  std::map<Resource, int64_t> totals;
  double memoryLimit = cluster.memoryPerRankGiB
                           ? *cluster.memoryPerRankGiB * double(1ull << 30)
                           : 0;
  for (size_t r = 0; r < traffic.rounds.size(); ++r) {
    const RoundTraffic &round = traffic.rounds[r];
    RoundEstimate &estimate = out.rounds[r];
    for (size_t p = 0; p < kPhaseCount; ++p) {
      Phase phase = static_cast<Phase>(p);
      std::map<uint32_t, double> finish;
      PhaseEstimate solved = solvePhase(
          phaseLoads(phase, round, cluster, traffic.sharedSource), cluster,
          finish, totals);
      for (const auto &[rank, seconds] : finish)
        if (rank < out.ranks.size())
          out.ranks[rank].busySeconds += seconds;
      estimate.seconds += solved.seconds;
      out.phaseSeconds[p] += solved.seconds;
      out.boundSeconds[static_cast<size_t>(solved.bound.kind)] +=
          solved.seconds;
      if (solved.seconds > estimate.longestPhase().seconds)
        estimate.longest = phase;
      estimate.phases[p] = solved;
    }
    if (std::optional<uint32_t> critical = estimate.longestPhase().criticalRank)
      if (*critical < out.ranks.size())
        ++out.ranks[*critical].criticalRounds;
    out.seconds += estimate.seconds;
    if (cluster.memoryPerRankGiB)
      for (const RankRoundTraffic &rank : round.ranks)
        if (double(rank.traffic.bufferBytes) > memoryLimit)
          out.memoryWarnings.push_back(
              MemoryWarning{uint32_t(r), rank.rank, rank.traffic.bufferBytes});
  }
  for (const auto &[resource, bytes] : totals) {
    double seconds = double(bytes) / bandwidth(cluster, resource.kind);
    if (seconds > out.ideal.seconds)
      out.ideal = ResourceLoad{resource, bytes, seconds};
  }
  return out;
}

} // namespace analysis
} // namespace aoa
