//===- ShardDriver.h - What aoa-shard does with its flags -------*- C++ -*-===//
//
// Loads the layout (shard metadata), picks the data's source (a checkpoint
// directory of any kind, a safetensors file of whole tensors, or a synthetic
// fill) and writes the checkpoint in that layout
// (aoa/checkpoint/ShardedCheckpointWriter.h). Everything is checked before
// the first file is written.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_SHARDDRIVER_H
#define AOA_DRIVER_SHARDDRIVER_H

#include <iosfwd>
#include <string>

namespace aoa {

struct ShardCommand {
  std::string layoutPath;      ///< shard metadata of the layout to write
  std::string fromPath;        ///< a checkpoint directory or safetensors file
  std::string fillSpec;        ///< or synthetic data: random[:SEED], iota
  std::string outputDirectory; ///< created when missing
  bool overwrite = false;
  bool color = false; ///< colored diagnostics
};

/// Runs aoa-shard: a one-line report to `out`, diagnostics to `err`.
/// Returns the process's exit code (0, or 1 on any error).
int runShard(const ShardCommand &command, std::ostream &out,
             std::ostream &err);

} // namespace aoa

#endif // AOA_DRIVER_SHARDDRIVER_H
