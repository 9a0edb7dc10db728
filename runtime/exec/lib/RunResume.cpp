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

#include "aoa/runtime/support/Messages.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace aoa::runtime {

using plan::Opcode;

namespace {

/// With node-local directories: every source file this rank reads must be
/// in its own source directory; the others' are never looked for.
Status checkOwnSources(const plan::Plan &plan, uint32_t rank,
                       const std::string &sourceDirectory,
                       const std::vector<bool> &needed) {
  std::vector<std::string> missing;
  size_t neededCount = 0;
  for (uint32_t f = 0; f < needed.size(); ++f) {
    if (!needed[f])
      continue;
    ++neededCount;
    std::error_code error;
    const std::string &path = plan.sourceFiles[f].path;
    if (!fs::exists(fs::path(sourceDirectory) / path, error))
      missing.push_back(path);
  }
  if (missing.empty())
    return Status();
  std::string names;
  for (size_t i = 0; i < missing.size(); ++i) {
    if (i == 8) {
      names += " and " + std::to_string(missing.size() - i) + " more";
      break;
    }
    names += (i ? ", " : "") + quoteName(missing[i]);
  }
  std::string which =
      missing.size() < neededCount
          ? std::to_string(missing.size()) + " of the " +
                std::to_string(neededCount) + " source files"
      : neededCount == 1
          ? std::string("the source file")
          : "all " + std::to_string(neededCount) + " source files";
  return Error{"the source directory " + quoteName(sourceDirectory) +
                   " lacks " + which + " that the plan gives rank " +
                   std::to_string(rank) + " to read: " + names,
               "with --node-local each rank reads the source files the plan "
               "gives it (aoa-plan dump PLAN: the lines 'source-file ID rank "
               "R PATH') from its own --src-dir; copy them there"};
}

} // namespace

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
  if (options_.nodeLocal && scope_ == RankScope::OwnRank)
    if (Status present = checkOwnSources(plan_, rank_, options_.sourceDirectory,
                                         neededSources);
        !present.ok())
      return present;
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
