//===- ProcessPerRankRun.h - One rank's run, in its own process -*- C++ -*-===//
//
// The mpi and nccl backends run one process per rank and differ only in how
// a round's buffers move (MPI messages between host buffers; uploads, NCCL
// and kernels on a GPU). Everything else is this class: checking the job
// and the plan, preparing the destination (rank 0 first), opening the
// files, agreeing on what earlier runs finished, installing the files,
// metadata.json (rank 0, last), --verify, the report, and the cleanup after
// a failure. The ranks agree (RankGroup::sum of failure flags) after every
// step that can fail, so a failure on one rank stops all of them at the
// next agreement and none waits for a message that will not come.
//
// A backend derives from it and implements its buffers and its rounds.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_LIB_PROCESSPERRANKRUN_H
#define AOA_RUNTIME_EXEC_LIB_PROCESSPERRANKRUN_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/LiveInstructions.h"
#include "aoa/runtime/exec/RankGroup.h"
#include "aoa/runtime/exec/RankRound.h"
#include "aoa/runtime/exec/RankRunResult.h"
#include "aoa/runtime/exec/RunOptions.h"
#include "aoa/runtime/storage/DestinationFiles.h"
#include "aoa/runtime/storage/SourceFiles.h"
#include "aoa/runtime/support/ThreadPool.h"

#include "llvm/ADT/ArrayRef.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace aoa::runtime {

class ProgressMeter;

class ProcessPerRankRun {
public:
  ProcessPerRankRun(const plan::Plan &plan, const RunOptions &options,
                    const RankGroup &group, ProgressMeter *progress,
                    JobLauncher launcher);
  virtual ~ProcessPerRankRun();

  /// Collective: every rank calls it.
  RankRunResult run();

protected:
  /// The host memory this rank's buffers take at once (checked, summed
  /// over the host's ranks, against the memory limit).
  virtual uint64_t hostBufferBytes() const = 0;
  /// Further checks before anything is touched (e.g. GPU memory).
  virtual Status checkResources() { return Status(); }
  /// Allocates the buffers, once the work is known.
  virtual Status allocateBuffers() = 0;
  /// Runs every round with live work; false once the ranks agreed on a
  /// failure (the failure is then in result_).
  virtual bool runRounds() = 0;
  /// Frees the buffers (after the rounds, or after a failure).
  virtual void releaseBuffers() = 0;
  /// False for a run whose writes go to memory the caller owns (the nccl
  /// backend's device tensors): no destination directory, no files, no
  /// journal, no metadata.json.
  virtual bool writesFiles() const { return true; }

  /// Every rank says whether `status` failed; true when none did. This
  /// rank's first failure is kept for its report. Also shares the bytes
  /// written so far, for rank 0's progress.
  bool agree(const Status &status);

  /// The number of rounds of the longest rank program.
  size_t roundCount() const;
  /// Whether any rank has a live instruction in round `r`.
  bool roundHasWork(size_t r) const;
  /// This rank's round `r`, with only its live instructions.
  RankRound liveRound(size_t r) const;
  /// The round's reads (writes) on the thread pool, into (from) the
  /// pointers the round was laid out with.
  Status runReads(const RankRound &round);
  Status runWrites(const RankRound &round);
  /// Errors of this rank without the "rank R, " RankRound puts first
  /// (a rank's errors are printed as its own).
  Status withoutRank(Status status) const;

  const plan::Plan &plan_;
  const RunOptions &options_;
  const RankGroup &group_;
  uint32_t rank_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<DestinationFiles> destinations_;
  std::optional<SourceFiles> sources_;
  InstructionMask live_;
  uint64_t bytesExchanged_ = 0;
  /// The bytes written when !writesFiles().
  std::atomic<uint64_t> bytesWrittenToMemory_{0};
  RankRunResult result_;

private:
  Status checkJob() const;
  /// Checks the memory of this host's ranks; collective over the host.
  Status checkMemory();
  DestinationOptions destinationOptions() const;
  /// After opening: what is left to do, and the source files for it.
  Status prepareWork();
  /// The rounds of a run that writes no files (!writesFiles()).
  RankRunResult runIntoMemory();
  /// Collective: the report's byte totals over all ranks.
  void sumTotals(uint64_t bytesWritten);
  /// After a failure once the files were opened: keeps the staging
  /// directory when any rank has a finished file, else removes it.
  RankRunResult failAfterOpen();
  RankRunResult finish();

  ProgressMeter *progress_;
  JobLauncher launcher_;
  std::chrono::steady_clock::time_point started_ =
      std::chrono::steady_clock::now();
  bool createdDirectory_ = false; ///< by rank 0's prepareDirectory
  /// Rank 0 holds the destination's lock for the whole run.
  FileDescriptor destinationLock_;
  /// Bytes the other ranks had written at the last agreement.
  std::atomic<uint64_t> othersWritten_{0};
  std::atomic<uint64_t> bytesRead_{0};
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_LIB_PROCESSPERRANKRUN_H
