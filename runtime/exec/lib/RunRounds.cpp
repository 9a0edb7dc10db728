//===- RunRounds.cpp - A rank's live rounds, its reads and writes ---------===//
//
// The backends' rounds are built from these: which rounds have work on any
// rank, one rank's round with only its live instructions, and its reads and
// writes on the thread pool. How buffers live and how messages move is the
// backend's (runRounds).
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/exec/RunLifeCycle.h"

#include <algorithm>

namespace aoa::runtime {

size_t RunLifeCycle::roundCount() const {
  size_t rounds = 0;
  for (const plan::RankProgram &program : plan_.programs)
    rounds = std::max(rounds, program.rounds.size());
  return rounds;
}

bool RunLifeCycle::roundHasWork(size_t r) const {
  for (const auto &rounds : live_)
    if (r < rounds.size())
      for (uint8_t live : rounds[r])
        if (live)
          return true;
  return false;
}

RankRound RunLifeCycle::liveRound(uint32_t rank, size_t r) const {
  llvm::ArrayRef<uint8_t> live;
  if (r < live_[rank].size())
    live = live_[rank][r];
  return RankRound(plan_, rank, r, live);
}

Status RunLifeCycle::runReads(const RankRound &round) {
  uint64_t bytes = 0;
  for (uint32_t i : round.reads())
    bytes += round.bufferBytes(round.instruction(i).buffer);
  bytesRead_ += bytes;
  return withoutRank(pool_->parallelFor(round.reads().size(), [&](size_t k) {
    return round.runRead(round.reads()[k], *sources_);
  }));
}

Status RunLifeCycle::runWrites(const RankRound &round) {
  return withoutRank(pool_->parallelFor(round.writes().size(), [&](size_t k) {
    return round.runWrite(round.writes()[k], *destinations_);
  }));
}

} // namespace aoa::runtime
