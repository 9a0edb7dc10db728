//===- ClusterSpec.h - A small description of a cluster ---------*- C++ -*-===//
//
// The machine a plan is estimated on (aoa-plan estimate --cluster SPEC,
// docs/aoa-plan.md): a JSON object of bandwidths in decimal GB/s (10^9
// bytes per second) and sizes,
//
//   {"ranks_per_node": 8, "disk_read_GBps": 6.0, "disk_write_GBps": 4.0,
//    "nic_GBps": 25.0, "nvlink_GBps": 300.0, "memory_per_rank_GiB": 80,
//    "copy_GBps": 20.0, "shared_fs_read_GBps": 40.0}
//
// ranks_per_node and the disk and NIC bandwidths are required (they differ
// most between clusters); nvlink_GBps defaults to 300, copy_GBps to 20,
// without memory_per_rank_GiB no memory check is made, and without
// shared_fs_read_GBps a plan compiled with --shared-src reads from the
// node disks. Every problem (an
// unknown key, a wrong type, a value that is not positive, a missing key) is
// a located diagnostic with a hint; all of a file's problems are reported.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_ANALYSIS_CLUSTERSPEC_H
#define AOA_ANALYSIS_CLUSTERSPEC_H

#include "aoa/ir/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>

namespace aoa {
namespace analysis {

struct ClusterSpec {
  /// Rank r runs on node r / ranksPerNode.
  uint32_t ranksPerNode = 8;
  /// A node's disks, shared by its ranks.
  double diskReadGBps = 0;
  double diskWriteGBps = 0;
  /// A node's network bandwidth per direction (all its NICs together),
  /// shared by its ranks' messages to and from other nodes.
  double nicGBps = 0;
  /// A rank's bandwidth per direction to ranks of its own node.
  double nvlinkGBps = 300;
  /// A rank's transform (copy, permute, cast) throughput, in output bytes.
  double copyGBps = 20;
  /// The memory a round's buffers may take on a rank; none: not checked.
  std::optional<double> memoryPerRankGiB;
  /// The read bandwidth of a file system every node sees, all nodes
  /// together: where a plan compiled with --shared-src reads its sources
  /// (through each node's NIC). None: from the node disks, as other plans.
  std::optional<double> sharedFsReadGBps;

  uint32_t nodeOf(uint32_t rank) const { return rank / ranksPerNode; }
  uint32_t nodesFor(uint32_t ranks) const {
    return (ranks + ranksPerNode - 1) / ranksPerNode;
  }
};

/// Reads and checks the spec at `path`; on any error reports it and
/// returns nullopt.
std::optional<ClusterSpec> loadClusterSpec(const std::string &path,
                                           SourceManager &sources,
                                           DiagnosticEngine &diags);

/// As loadClusterSpec, for text in memory; `path` names it in diagnostics.
std::optional<ClusterSpec> loadClusterSpecText(const std::string &path,
                                               std::string text,
                                               SourceManager &sources,
                                               DiagnosticEngine &diags);

} // namespace analysis
} // namespace aoa

#endif // AOA_ANALYSIS_CLUSTERSPEC_H
