//===- MpiExecutor.cpp ----------------------------------------------------===//
#include "aoa/runtime/backends/MpiBackend.h"

#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/exec/RunLifeCycle.h"

#include <algorithm>
#include <new>

namespace aoa::runtime {

namespace {

/// The mpi backend's rounds: host buffers in one arena, sized for the
/// rank's largest round (without the buffers of reads that its writes copy
/// file to file); messages over MPI.
class MpiRun final : public RunLifeCycle {
public:
  MpiRun(const plan::Plan &plan, const RunOptions &options,
         const MpiSession &session, ProgressMeter *progress)
      : RunLifeCycle(plan, options, session, RankScope::OwnRank, progress,
                     JobLauncher()),
        session_(session),
        roundBytes_(arenaBytesByRound(plan, session.rank(),
                                      ReceivedBuffers::Owned,
                                      options.directCopy)),
        arenaBytes_(roundBytes_.empty() ? 0
                                        : *std::max_element(roundBytes_.begin(),
                                                            roundBytes_.end())) {}

private:
  uint64_t hostBufferBytes() const override { return arenaBytes_; }
  uint64_t roundBufferBytes(uint32_t rank, size_t r) const override {
    return rank == rank_ && r < roundBytes_.size() ? roundBytes_[r] : 0;
  }
  Status allocateBuffers() override;
  bool runRounds() override;
  void releaseBuffers() override { arena_.reset(); }
  Status runCopiesAndWrites(const RankRound &round,
                            const std::vector<DirectTransfer> &direct);

  const MpiSession &session_;
  /// By round: the arena it needs (arenaBytesByRound: no live round needs
  /// more); the arena holds the largest.
  std::vector<uint64_t> roundBytes_;
  uint64_t arenaBytes_;
  std::unique_ptr<uint8_t[]> arena_;
};

Status MpiRun::allocateBuffers() {
  if (!arenaBytes_)
    return Status();
  arena_.reset(new (std::nothrow) uint8_t[arenaBytes_]);
  if (!arena_)
    return Error{"cannot allocate " + formatByteSize(int64_t(arenaBytes_)) +
                     " for the buffers of this rank's largest round",
                 "recompile the plan with a smaller --memory-budget, or "
                 "start fewer ranks per host"};
  return Status();
}

Status MpiRun::runCopiesAndWrites(const RankRound &round,
                                  const std::vector<DirectTransfer> &direct) {
  for (const std::vector<uint32_t> &level : round.copyLevels())
    if (Status status = pool_->parallelFor(
            level.size(), [&](size_t k) { return round.runCopy(level[k]); });
        !status.ok())
      return withoutRank(std::move(status));
  return runWrites(round, direct);
}

bool MpiRun::runRounds() {
  // Each round's agreement, before its messages are posted, also covers
  // the copies and writes of the round before.
  Status pending;
  for (size_t r = 0; r < roundCount(); ++r) {
    if (!roundHasWork(r))
      continue;
    RankRound round = liveRound(rank_, r);
    // Reads that feed a write of this rank unchanged are copied file to
    // file by that write, and need no buffer.
    std::vector<DirectTransfer> direct = directTransfersWithin(round);
    if (!round.empty()) {
      std::vector<uint8_t> inArena = round.buffersInArena(
          ReceivedBuffers::Owned, copiedDirectly(round, direct));
      if (round.arenaBytes(inArena) > arenaBytes_) { // see arenaBytes_
        if (pending.ok())
          pending = Error{"internal: " + round.where() + " needs " +
                            formatByteSize(int64_t(round.arenaBytes(inArena))) +
                            " of buffers, more than the " +
                            formatByteSize(int64_t(arenaBytes_)) + " allocated",
                          "please report this plan"};
      } else {
        round.layOutBuffers(arena_.get(), inArena);
      }
    }
    if (pending.ok())
      pending = runReads(round, direct);
    if (!agree(pending))
      return false;
    pending = exchangeWithMpi(
        session_, round, [&](uint32_t b) { return round.buffer(b); },
        bytesExchanged_);
    if (pending.ok())
      pending = runCopiesAndWrites(round, direct);
  }
  return agree(pending);
}

} // namespace

RankRunResult runPlanWithMpi(const plan::Plan &plan, const RunOptions &options,
                             const MpiSession &session,
                             ProgressMeter *progress) {
  return MpiRun(plan, options, session, progress).run();
}

} // namespace aoa::runtime
