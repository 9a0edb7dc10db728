//===- PlanEstimate.h - How long a plan takes on a cluster ------*- C++ -*-===//
//
// A bandwidth model of a run (docs/aoa-plan.md, "estimate"), kept simple so
// that its parameters (ClusterSpec.h) can be calibrated against measured
// runs:
//
//  - rank r runs on node r / ranks_per_node;
//  - a round's phases run one after another, each ending when its slowest
//    rank ends: read, exchange, copy, write; a round ends with its write
//    phase, and the plan's time is the sum of its rounds';
//  - a phase lasts as long as its most loaded resource needs, bytes over
//    bandwidth: a node's disk (read, write) is shared by its ranks (a plan
//    compiled with --shared-src, on a cluster with shared_fs_read_GBps,
//    reads from the shared file system instead, all ranks sharing it, each
//    node's reads also crossing its NIC), a
//    message between ranks of one node uses the NVLink of the sender (send)
//    and of the receiver (receive), one between nodes the NIC of each node
//    (each direction separately, shared by the node's ranks), and a rank's
//    transforms run at copy_GBps;
//  - a shared resource serves its users at equal shares, so a rank that
//    moves fewer bytes finishes earlier (its busy time);
//  - no latency, no overlap between phases or rounds.
//
// The ideal lower bound is the time of the most loaded single resource over
// the whole plan: no schedule of the same bytes on the same cluster is
// faster.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_ANALYSIS_PLANESTIMATE_H
#define AOA_ANALYSIS_PLANESTIMATE_H

#include "aoa/analysis/ClusterSpec.h"
#include "aoa/analysis/PlanTraffic.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aoa {
namespace analysis {

enum class Phase { Read, Exchange, Copy, Write };
constexpr size_t kPhaseCount = 4;
const char *phaseName(Phase phase);

enum class ResourceKind {
  None,
  DiskRead,
  DiskWrite,
  NicSend,
  NicReceive,
  NvlinkSend,
  NvlinkReceive,
  Copy,
  SharedFsRead,
};
constexpr size_t kResourceKindCount = 9;

/// A node's disk or NIC, a rank's NVLink or copies, or the shared file
/// system.
struct Resource {
  ResourceKind kind = ResourceKind::None;
  /// The node (disk, NIC) or the rank (NVLink, copies); 0 for the shared
  /// file system.
  uint32_t index = 0;

  /// "disk read of node 3", "NIC of node 0 (send)", "NVLink of rank 5
  /// (receive)", "copies of rank 2"; "nothing" for None.
  std::string describe() const;
  friend bool operator<(const Resource &a, const Resource &b) {
    return a.kind != b.kind ? a.kind < b.kind : a.index < b.index;
  }
};

/// "disk read", "NIC", "NVLink", "copies": kinds grouped as the summary
/// names them.
const char *resourceKindName(ResourceKind kind);

struct PhaseEstimate {
  double seconds = 0;
  /// The resource that needs `seconds`; None when the phase has no work.
  Resource bound;
  int64_t boundBytes = 0;
  /// The rank that moves most of the bound's bytes (it ends last).
  std::optional<uint32_t> criticalRank;
};

struct RoundEstimate {
  std::array<PhaseEstimate, kPhaseCount> phases;
  double seconds = 0;
  /// The phase that takes the longest (its bound bounds the round).
  Phase longest = Phase::Read;
  const PhaseEstimate &longestPhase() const {
    return phases[static_cast<size_t>(longest)];
  }
};

struct RankEstimate {
  /// When, summed over the phases of every round, the rank has finished
  /// its own part of the phase; the rest of the plan's time it waits.
  double busySeconds = 0;
  /// Rounds in which it is the critical rank.
  uint32_t criticalRounds = 0;
};

struct ResourceLoad {
  Resource resource;
  int64_t bytes = 0;
  double seconds = 0;
};

/// A rank whose buffers of one round exceed memory_per_rank_GiB.
struct MemoryWarning {
  uint32_t round = 0;
  uint32_t rank = 0;
  int64_t bufferBytes = 0;
};

struct PlanEstimate {
  std::vector<RoundEstimate> rounds;
  /// One per rank of the plan.
  std::vector<RankEstimate> ranks;
  double seconds = 0;
  /// The plan's time spent in each phase (summed over rounds).
  std::array<double, kPhaseCount> phaseSeconds{};
  /// The plan's time bounded by each resource kind (index: ResourceKind).
  std::array<double, kResourceKindCount> boundSeconds{};
  /// The most loaded single resource over the plan: the ideal lower bound.
  ResourceLoad ideal;
  std::vector<MemoryWarning> memoryWarnings;
};

PlanEstimate estimatePlan(const PlanTraffic &traffic,
                          const ClusterSpec &cluster);

/// Bytes per second of a resource of `kind` on `cluster`.
double bandwidth(const ClusterSpec &cluster, ResourceKind kind);

} // namespace analysis
} // namespace aoa

#endif // AOA_ANALYSIS_PLANESTIMATE_H
