//===- SourceFiles.h - The source checkpoint a plan reads -------*- C++ -*-===//
//
// Opens every source file a plan names (relative to --src-dir) before any
// byte moves, and checks each stored tensor the plan reads against the file:
// present, same dtype, same stored shape. A missing, truncated or corrupt
// file is therefore reported before anything is written. Files are only ever
// read (opened O_RDONLY).
//
// Reads of regions with long contiguous runs use pread; regions made of many
// short runs (a column strip of a row-major tensor) are copied out of a
// read-only mapping of the file instead, saving a system call per run.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SOURCEFILES_H
#define AOA_RUNTIME_SOURCEFILES_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/Error.h"
#include "aoa/runtime/SafetensorsReader.h"

#include <cstddef>
#include <string>
#include <vector>

namespace aoa::runtime {

class ThreadPool;

/// A region stored as one run of bytes in its source file (locateRun).
struct SourceRun {
  int fd = -1;             ///< the file, open read-only
  uint64_t fileOffset = 0; ///< of the run's first byte, in the file
  uint64_t size = 0;
  /// The same bytes in the file's read-only mapping, or null.
  const uint8_t *mapped = nullptr;
  uint32_t tensor = 0;       ///< the source tensor
  uint64_t tensorOffset = 0; ///< of the run's first byte, in the tensor
};

class SourceFiles {
public:
  /// Opens and checks the files of `plan.sourceFiles` that `needed` marks
  /// (by file id), in parallel on `pool`. Reports up to 20
  /// problems in one error.
  static Expected<SourceFiles> open(const plan::Plan &plan,
                                    const std::string &sourceDirectory,
                                    const std::vector<bool> &needed,
                                    ThreadPool &pool);

  /// Reads `region` (in the key's coordinates) of source tensor `tensor`
  /// into `buffer`, dense row-major, `bufferBytes` long.
  Status readRegion(uint32_t tensor, const Box &region, void *buffer,
                    size_t bufferBytes) const;

  /// Where `region` of source tensor `tensor` lies in its file; fails
  /// unless it is one run of bytes (StoredRegion.h: singleStoredRun).
  Expected<SourceRun> locateRun(uint32_t tensor, const Box &region) const;
  /// Drops the pages of `run` that were touched through the mapping from
  /// this process's resident memory.
  void releaseRun(const SourceRun &run) const;

private:
  /// The reader and header entry of source tensor `tensor`, or an error
  /// when its file was not opened for this run.
  Expected<std::pair<const SafetensorsReader *, const SafetensorsTensor *>>
  entryOf(uint32_t tensor) const;

  SourceFiles(const plan::Plan &plan) : plan_(&plan) {}

  const plan::Plan *plan_;
  /// By file id; empty optional for files the run does not need.
  std::vector<std::optional<SafetensorsReader>> readers_;
  /// By source tensor id: the tensor's entry in its file's header.
  std::vector<const SafetensorsTensor *> entries_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SOURCEFILES_H
