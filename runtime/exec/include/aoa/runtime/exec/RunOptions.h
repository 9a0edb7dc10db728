//===- RunOptions.h - What an execution of a plan is told and tells -*- C++ -*-===//
//
// Shared by every backend: local, mpi and nccl (docs/aoa-run.md).
// A plan is the same for all of them; only the executor changes.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_RUNOPTIONS_H
#define AOA_RUNTIME_EXEC_RUNOPTIONS_H

#include <cstdint>
#include <functional>
#include <string>

namespace aoa::runtime {

struct RunOptions {
  std::string sourceDirectory;
  std::string destinationDirectory;
  /// Worker threads for reads, copies and writes; 0 = one per core (mpi:
  /// per process, the host's cores divided among its processes).
  unsigned threads = 0;
  /// Re-read every written file from disk and check its hashes.
  bool verify = false;
  /// Replace existing destination files and metadata.json.
  bool overwrite = false;
  /// Ignore the journal of an interrupted run and start over.
  bool restart = false;
  /// mpi, nccl: each process has its own source and destination
  /// directories, which no other process sees (node-local disks). Every
  /// rank then prepares, locks, stages into and cleans up its own DST, and
  /// reads only its own source files there; rank 0's DST also gets what
  /// needs every rank's data (metadata.json with every tensor's hash, the
  /// Hugging Face index) and the copied files, from rank 0's source
  /// directory. Without it, DST is one directory every rank sees.
  bool nodeLocal = false;
  /// Identifies the plan in the run journal (a hash of the plan's text).
  uint64_t planFingerprint = 0;
  /// The most buffer memory the run may hold at once (mpi: all processes
  /// of a host together); 0 = 90% of the machine's physical memory.
  uint64_t memoryLimit = 0;
  /// For testing resumption: fail, as an interruption would, once this many
  /// files have been finished by this run (0 = never); mpi: by each rank.
  uint32_t stopAfterFiles = 0;
  /// The local backend: a read whose bytes reach one write unchanged (in
  /// runs long enough, DirectTransfers.h) is copied file to file inside the
  /// kernel instead of through a buffer; the mpi backend does so when the
  /// write is on the read's rank. Off only to compare the two paths.
  bool directCopy = true;
  /// Asked between rounds (the local backend); when it returns true the run
  /// stops as a failed run does ("interrupted"): DST gets no metadata.json,
  /// and finished files stay in DST/.aoa-run for the same run to resume
  /// from. The Python module sets it when Ctrl-C is pressed.
  std::function<bool()> interrupted;
};


/// The buffer memory a run may hold: options.memoryLimit, or 90% of the
/// machine's physical memory when that is 0.
uint64_t memoryLimitOf(const RunOptions &options);

struct RunReport {
  uint32_t ranks = 0;
  uint32_t roundsRun = 0;
  uint64_t bytesRead = 0;
  uint64_t bytesExchanged = 0; ///< between ranks (in memory for `local`)
  uint64_t bytesWritten = 0;   ///< tensor data
  /// Of bytesWritten, copied file to file (RunOptions::directCopy).
  uint64_t bytesCopiedDirectly = 0;
  uint64_t peakBufferBytes = 0;
  uint32_t filesWritten = 0;
  uint32_t filesResumed = 0; ///< finished by an earlier, interrupted run
  bool verified = false;
  double seconds = 0;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_RUNOPTIONS_H
