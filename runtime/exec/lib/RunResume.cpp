//===- RunResume.cpp - What is left to do ---------------------------------===//
//
// A run resumes an interrupted one of the same plan: the destination files
// finished before (each process's journal, agreed on by all) are not
// written again, so the instructions that only feed them are dead
// (LiveInstructions.h), and source files read only by dead instructions are
// not opened.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/exec/RunLifeCycle.h"

namespace aoa::runtime {

using plan::Opcode;

std::vector<uint32_t> RunLifeCycle::ranksRun() const {
  if (scope_ == RankScope::OwnRank)
    return {rank_};
  std::vector<uint32_t> ranks(plan_.programs.size());
  for (uint32_t rank = 0; rank < ranks.size(); ++rank)
    ranks[rank] = rank;
  return ranks;
}

Status RunLifeCycle::prepareWork() {
  // The files every process has finished, agreed on by all.
  std::vector<bool> finishedFiles(plan_.destinationFiles.size(), false);
  if (destinations_) {
    std::vector<bool> own = destinations_->finishedFiles();
    std::vector<uint64_t> finished(own.begin(), own.end());
    group_.max(finished);
    std::vector<uint64_t> resumed = {destinations_->resumedFileCount()};
    group_.sum(resumed);
    result_.report.filesResumed = uint32_t(resumed[0]);
    for (size_t f = 0; f < finishedFiles.size(); ++f)
      finishedFiles[f] = finished[f] != 0;
  }
  // A file nobody wants is as good as finished: nothing is done for it.
  for (uint32_t f = 0; f < finishedFiles.size(); ++f)
    if (!wantsFile(f))
      finishedFiles[f] = true;

  Expected<InstructionMask> live = liveInstructions(plan_, finishedFiles);
  if (!live.ok())
    // Every process finds the same problem: process 0 reports it, and the
    // agreement stops the others.
    return rank_ == 0 ? live.status() : Status();
  live_ = std::move(*live);
  std::vector<bool> neededSources(plan_.sourceFiles.size(), false);
  for (uint32_t rank : ranksRun()) {
    const plan::RankProgram &program = plan_.programs[rank];
    for (size_t r = 0; r < program.rounds.size(); ++r) {
      const plan::Round &round = program.rounds[r];
      for (size_t i = 0; i < round.instructions.size(); ++i)
        if (live_[rank][r][i] && round.instructions[i].opcode == Opcode::Read)
          neededSources[plan_.sourceTensors[round.instructions[i].tensor]
                            .file] = true;
    }
  }
  Expected<SourceFiles> sources =
      SourceFiles::open(plan_, options_.sourceDirectory, neededSources, *pool_);
  if (!sources.ok())
    return sources.error();
  sources_.emplace(std::move(*sources));
  if (Status status = allocateBuffers(); !status.ok())
    return status;
  return destinations_ ? destinations_->finishEmptyFiles() : Status();
}

} // namespace aoa::runtime
