//===- ConvertDriver.h - What aoa-convert does with its flags ---*- C++ -*-===//
//
// One command from a checkpoint directory to a converted one: the source is
// scanned (a Hugging Face directory, a plain directory of safetensors files
// or aoa's own output), the statements (optional: none keeps every key) are
// compiled against a destination laid out by a pattern layout spec or as a
// Hugging Face directory, and the plan is run with the local backend. The
// plan and the source metadata it was compiled from are left in DST/.aoa/
// for inspection. Running the same command again after an interruption
// resumes: compilation is deterministic, so the plan is the same.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_CONVERTDRIVER_H
#define AOA_DRIVER_CONVERTDRIVER_H

#include "aoa/driver/RunDriver.h"

#include <cstdint>
#include <iosfwd>
#include <string>

namespace aoa {

struct ConvertCommand {
  std::string sourceDirectory;
  std::string destinationDirectory;
  /// The statements (JSON or .aoa); empty: no statements, keys kept.
  std::string configPath;
  bool reverse = false;
  /// The destination: a pattern layout spec (docs/layouts.md) ...
  std::string layoutSpecPath;
  /// ... or a Hugging Face directory of files up to maxShardSize bytes.
  bool toHuggingFace = false;
  uint64_t maxShardSize = 5000000000ULL;
  int64_t memoryBudget = int64_t(1) << 30;
  /// threads, verify, overwrite, restart, memoryLimit; the directories are
  /// taken from above.
  runtime::RunOptions run;
  ProgressStyle progress = ProgressStyle::Auto;
  bool color = false;
};

/// Runs the command; returns the process exit code (0 on success, 1 on any
/// error, which has then been reported on `err`). What it did is printed on
/// `out`.
int runConvertCommand(const ConvertCommand &command, std::ostream &out,
                      std::ostream &err);

} // namespace aoa

#endif // AOA_DRIVER_CONVERTDRIVER_H
