//===- RunLifeCycle.h - One process's part of a run of a plan ---*- C++ -*-===//
//
// Every backend (runtime/backends/) runs a plan through the same life
// cycle; they differ only in how a round's buffers live and move (the local
// backend: every rank's in one process, a receive borrowing the sender's
// buffer; mpi: one rank per process, MPI messages between host buffers;
// nccl: uploads, NCCL and kernels on a GPU). Everything else is this class, one stage per file of
// runtime/exec/lib/:
//
//   RunLifeCycle.cpp  checks of the job and of memory, the sequence of the
//                     stages, the ranks' agreements and the report
//   RunStaging.cpp    the destination: prepared (by process 0, or by each
//                     process with RunOptions::nodeLocal), its files
//                     opened, and after a failure kept for a resume or
//                     removed
//   RunResume.cpp     what is left to do: the files earlier runs finished,
//                     the live instructions, the source files they read
//   RunRounds.cpp     a rank's live rounds, its reads and writes
//   RunInstall.cpp    the files moved into DST, metadata.json (process 0,
//                     last, with every process's hashes), --verify
//
// The processes of a run agree (RankGroup::sum of failure flags) after
// every step that can fail, so a failure in one stops all of them at the
// next agreement and none waits for a message that will not come. The
// local backend is a group of one process that runs every rank
// (RankScope::AllRanks): its agreements are the identity.
//
// A backend derives from it and implements its buffers and its rounds.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_RUNLIFECYCLE_H
#define AOA_RUNTIME_EXEC_RUNLIFECYCLE_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/DirectTransfers.h"
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

/// Which ranks of the plan one process runs.
enum class RankScope {
  /// Every rank, in a group of one process (the local backend).
  AllRanks,
  /// Its own rank of the group, one process per rank (mpi, nccl).
  OwnRank,
};

class RunLifeCycle {
public:
  RunLifeCycle(const plan::Plan &plan, const RunOptions &options,
               const RankGroup &group, RankScope scope,
               ProgressMeter *progress, JobLauncher launcher);
  virtual ~RunLifeCycle();

  /// Collective: every process of the group calls it.
  RankRunResult run();

protected:
  /// The host memory this process's buffers take at once (checked, summed
  /// over the host's processes, against the memory limit).
  virtual uint64_t hostBufferBytes() const = 0;
  /// The buffer bytes round `r` of `rank` needs, for the memory error (the
  /// plan's declared buffers unless the backend counts otherwise).
  virtual uint64_t roundBufferBytes(uint32_t rank, size_t r) const {
    return uint64_t(plan_.programs[rank].rounds[r].bufferBytes());
  }
  /// Further checks before anything is touched (e.g. GPU memory).
  virtual Status checkResources() { return Status(); }
  /// Allocates the buffers, once the work is known.
  virtual Status allocateBuffers() = 0;
  /// Runs every round with live work; false once the processes agreed on
  /// a failure (the failure is then in result_).
  virtual bool runRounds() = 0;
  /// Frees the buffers (after the rounds, or after a failure).
  virtual void releaseBuffers() = 0;
  /// False for a run whose writes go to memory the caller owns (the nccl
  /// backend's device tensors): no destination directory, no files, no
  /// journal, no metadata.json.
  virtual bool writesFiles() const { return true; }
  /// False for a destination file this run does not need (a run into the
  /// caller's memory of one rank's tensors): its writes, and the reads,
  /// messages and copies that only feed them, are not run.
  virtual bool wantsFile(uint32_t file) const { return true; }

  /// Every process says whether `status` failed; true when none did. This
  /// process's first failure is kept for its report. Also shares the bytes
  /// written so far, for process 0's progress.
  bool agree(const Status &status);

  /// The ranks this process runs, in increasing order.
  std::vector<uint32_t> ranksRun() const;
  /// The number of rounds of the longest rank program.
  size_t roundCount() const;
  /// Whether any rank has a live instruction in round `r` (agreed by the
  /// processes: one that holds only its own program cannot tell alone).
  bool roundHasWork(size_t r) const;
  /// Rank `rank`'s round `r`, with only its live instructions.
  RankRound liveRound(uint32_t rank, size_t r) const;
  /// The direct transfers (DirectTransfers.h) inside this process's rank's
  /// `round`: reads whose only live use is a write of the same rank. None
  /// without RunOptions::directCopy.
  std::vector<DirectTransfer>
  directTransfersWithin(const RankRound &round) const;
  /// The round's reads (writes) on the thread pool, into (from) the
  /// pointers the round was laid out with; the reads of `direct` are not
  /// run, and its writes copy file to file (copyDirectly).
  Status runReads(const RankRound &round,
                  const std::vector<DirectTransfer> &direct = {});
  Status runWrites(const RankRound &round,
                   const std::vector<DirectTransfer> &direct = {});
  /// Write `write` of `writer`'s round, its bytes copied inside the kernel
  /// from the source runs of read `read` of `reader`'s round; the tensor
  /// is hashed by reading the staged file back.
  Status copyDirectly(const RankRound &reader, uint32_t read,
                      const RankRound &writer, uint32_t write);
  /// An error once RunOptions::interrupted says so (asked between rounds).
  Status checkInterrupted() const;
  /// With RankScope::OwnRank, errors without the "rank R, " RankRound puts
  /// first (a process prints its rank's errors as its own).
  Status withoutRank(Status status) const;

  const plan::Plan &plan_;
  const RunOptions &options_;
  const RankGroup &group_;
  const RankScope scope_;
  /// The group's rank of this process (0 with RankScope::AllRanks).
  uint32_t rank_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<DestinationFiles> destinations_;
  std::optional<SourceFiles> sources_;
  InstructionMask live_;
  /// Per round: some rank has live work in it (agreeOnRoundsWithWork).
  std::vector<uint64_t> roundsWithWork_;
  uint64_t bytesExchanged_ = 0;
  std::atomic<uint64_t> bytesRead_{0};
  /// Of the bytes written, those copied file to file.
  std::atomic<uint64_t> bytesCopiedDirectly_{0};
  /// The bytes written when !writesFiles().
  std::atomic<uint64_t> bytesWrittenToMemory_{0};
  RankRunResult result_;

private:
  // RunLifeCycle.cpp
  Status checkJob() const;
  /// Checks the memory of this host's processes; collective over the host.
  Status checkMemory();
  /// The round with the most buffer bytes among the ranks this process
  /// runs, as the memory error's tail: "; the largest is rank R's round K,
  /// SIZE".
  std::string largestRound() const;
  /// Collective: roundsWithWork_ from every process's live_.
  void agreeOnRoundsWithWork();
  /// The rounds of a run that writes no files (!writesFiles()).
  RankRunResult runIntoMemory();
  /// Collective: the report's byte totals over all processes.
  void sumTotals(uint64_t bytesWritten);
  RankRunResult finish();

  // RunStaging.cpp
  DestinationOptions destinationOptions() const;
  /// Process 0 (with RunOptions::nodeLocal, every process: its own)
  /// prepares the destination directory and takes its lock; false once the
  /// processes agreed on a failure (nothing of DST is then this run's to
  /// clean up: it may be another run's).
  bool prepareDestination();
  /// With RunOptions::nodeLocal: an error when another process of this
  /// host was given the same destination directory; collective over the
  /// host.
  Status checkDestinationsApart() const;
  /// Every process opens the destination files it writes; false once the
  /// processes agreed on a failure.
  bool openDestination();
  /// After a failure once the destination was prepared: keeps the staging
  /// directory when any process has a finished file, else removes it.
  RankRunResult failAfterOpen();

  // RunResume.cpp
  /// After opening: what is left to do, the source files for it, the
  /// buffers, and the files with no data bytes finished.
  Status prepareWork();

  // RunInstall.cpp
  /// Every process moves its finished files into DST; process 0 then
  /// writes metadata.json with every process's hashes. Then --verify.
  bool install();
  bool verify();

  ProgressMeter *progress_;
  JobLauncher launcher_;
  std::chrono::steady_clock::time_point started_ =
      std::chrono::steady_clock::now();
  bool createdDirectory_ = false; ///< by this process's prepareDirectory
  /// Process 0 (node-local: each process) holds the destination's lock for
  /// the whole run.
  FileDescriptor destinationLock_;
  /// Bytes the other processes had written at the last agreement.
  std::atomic<uint64_t> othersWritten_{0};
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_RUNLIFECYCLE_H
