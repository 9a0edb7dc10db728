//===- RunRounds.cpp - A rank's live rounds, its reads and writes ---------===//
//
// The backends' rounds are built from these: which rounds have work on any
// rank, one rank's round with only its live instructions, and its reads and
// writes on the thread pool, unchanged runs copied file to file. How buffers
// live and how messages move is the backend's (runRounds).
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/exec/RunLifeCycle.h"

#include "aoa/runtime/storage/SourceFiles.h"

#include <algorithm>
#include <cstdint>

namespace aoa::runtime {

size_t RunLifeCycle::roundCount() const {
  size_t rounds = 0;
  for (const plan::RankProgram &program : plan_.programs)
    rounds = std::max(rounds, program.rounds.size());
  return rounds;
}

void RunLifeCycle::agreeOnRoundsWithWork() {
  roundsWithWork_.assign(roundCount(), 0);
  for (const auto &rounds : live_)
    for (size_t r = 0; r < rounds.size() && r < roundsWithWork_.size(); ++r)
      for (uint8_t live : rounds[r])
        if (live) {
          roundsWithWork_[r] = 1;
          break;
        }
  group_.max(roundsWithWork_);
}

bool RunLifeCycle::roundHasWork(size_t r) const {
  return r < roundsWithWork_.size() && roundsWithWork_[r] != 0;
}

RankRound RunLifeCycle::liveRound(uint32_t rank, size_t r) const {
  llvm::ArrayRef<uint8_t> live;
  if (r < live_[rank].size())
    live = live_[rank][r];
  return RankRound(plan_, rank, r, live);
}

std::vector<DirectTransfer>
RunLifeCycle::directTransfersWithin(const RankRound &round) const {
  if (!options_.directCopy || !writesFiles())
    return {};
  return directTransfersOnRank(plan_, round);
}

Status RunLifeCycle::runReads(const RankRound &round,
                              const std::vector<DirectTransfer> &direct) {
  uint64_t bytes = 0;
  for (uint32_t i : round.reads())
    bytes += round.bufferBytes(round.instruction(i).buffer);
  bytesRead_ += bytes;
  std::vector<uint32_t> reads = round.reads();
  if (!direct.empty()) {
    std::vector<uint8_t> copied(round.round().instructions.size(), 0);
    for (const DirectTransfer &transfer : direct)
      copied[transfer.read] = 1;
    reads.clear();
    for (uint32_t i : round.reads())
      if (!copied[i])
        reads.push_back(i);
  }
  return withoutRank(pool_->parallelFor(reads.size(), [&](size_t k) {
    return round.runRead(reads[k], *sources_);
  }));
}

Status RunLifeCycle::runWrites(const RankRound &round,
                               const std::vector<DirectTransfer> &direct) {
  // By instruction: the read whose bytes a write copies, or -1.
  std::vector<int64_t> readOf;
  if (!direct.empty())
    readOf.assign(round.round().instructions.size(), -1);
  for (const DirectTransfer &transfer : direct)
    readOf[transfer.write] = transfer.read;
  return withoutRank(pool_->parallelFor(round.writes().size(), [&](size_t k) {
    uint32_t write = round.writes()[k];
    if (!readOf.empty() && readOf[write] >= 0)
      return copyDirectly(round, uint32_t(readOf[write]), round, write);
    return round.runWrite(write, *destinations_);
  }));
}

Status RunLifeCycle::copyDirectly(const RankRound &reader, uint32_t read,
                                  const RankRound &writer, uint32_t write) {
  const plan::Instruction &readInst = reader.instruction(read);
  const plan::Instruction &writeInst = writer.instruction(write);
  Expected<std::vector<SourceRun>> runs =
      sources_->locateRuns(readInst.tensor, readInst.region);
  if (!runs.ok())
    return Error{reader.where() + ": " + runs.error().message,
                 runs.error().hint};
  Status status = destinations_->writeRegionFromFile(writeInst.tensor,
                                                     writeInst.region, *runs);
  if (!status.ok())
    return Error{writer.where() + ": " + status.error().message,
                 status.error().hint};
  for (const SourceRun &run : *runs)
    bytesCopiedDirectly_ += run.size;
  return Status();
}

} // namespace aoa::runtime
