//===- SourceFiles.h - The source checkpoint a plan reads -------*- C++ -*-===//
//
// Opens every source file a plan names (relative to --src-dir) before any
// byte moves, and checks each stored tensor the plan reads against the file:
// present, same dtype, same stored shape, and, where the plan recorded them
// at compile time, the same file size and data offsets (a file rewritten
// since). A missing, truncated, changed or corrupt file is therefore
// reported before anything is written. Files are only ever
// read (opened O_RDONLY).
//
// Every read is a pread, so a file that another process shortens during the
// run gives an error naming it, never SIGBUS (files are not mapped). Regions
// made of many short runs (a column strip of a row-major tensor) are
// gathered: runs close together in the file are read as one span and copied
// out, saving a system call per run.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_SOURCEFILES_H
#define AOA_RUNTIME_STORAGE_SOURCEFILES_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/support/Error.h"

#include <cstddef>
#include <string>
#include <vector>

namespace aoa::runtime {

class ThreadPool;

/// A run of bytes of a region in its source file (locateRuns).
struct SourceRun {
  int fd = -1;             ///< the file, open read-only
  uint64_t fileOffset = 0; ///< of the run's first byte, in the file
  uint64_t size = 0;
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

  /// Where `region` of source tensor `tensor` lies in its file: its runs
  /// of bytes (StoredRegion.h: forEachStoredRun), in the region's
  /// row-major order, so that they tile its dense bytes one after another.
  Expected<std::vector<SourceRun>> locateRuns(uint32_t tensor,
                                              const Box &region) const;

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

#endif // AOA_RUNTIME_STORAGE_SOURCEFILES_H
