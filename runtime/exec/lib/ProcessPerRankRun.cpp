//===- ProcessPerRankRun.cpp ----------------------------------------------===//
#include "ProcessPerRankRun.h"

#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/exec/ProgressMeter.h"

#include <algorithm>

namespace aoa::runtime {

using plan::Opcode;

ProcessPerRankRun::ProcessPerRankRun(const plan::Plan &plan,
                                     const RunOptions &options,
                                     const RankGroup &group,
                                     ProgressMeter *progress,
                                     JobLauncher launcher)
    : plan_(plan), options_(options), group_(group), rank_(group.rank()),
      progress_(group.rank() == 0 ? progress : nullptr),
      launcher_(std::move(launcher)) {}

ProcessPerRankRun::~ProcessPerRankRun() = default;

Status ProcessPerRankRun::withoutRank(Status status) const {
  if (status.ok())
    return status;
  Error error = status.error();
  std::string prefix = "rank " + std::to_string(rank_) + ", ";
  if (error.message.compare(0, prefix.size(), prefix) == 0)
    error.message.erase(0, prefix.size());
  return error;
}

bool ProcessPerRankRun::agree(const Status &status) {
  uint32_t size = group_.size();
  uint64_t written =
      destinations_ ? destinations_->bytesWritten().load() : uint64_t(0);
  std::vector<uint64_t> values(size + 1, 0);
  values[rank_] = status.ok() ? 0 : 1;
  values[size] = written;
  group_.sum(values);
  if (!status.ok() && !result_.error)
    result_.error = status.error();
  othersWritten_ = values[size] - written;
  result_.failedRanks.clear();
  for (uint32_t r = 0; r < size; ++r)
    if (values[r])
      result_.failedRanks.push_back(r);
  return result_.failedRanks.empty();
}

Status ProcessPerRankRun::checkJob() const {
  auto processes = [](uint32_t n) {
    return std::to_string(n) + (n == 1 ? " process" : " processes");
  };
  if (group_.size() != plan_.ranks)
    return Error{"the plan has " + std::to_string(plan_.ranks) +
                     (plan_.ranks == 1 ? " rank" : " ranks") + ", but " +
                     launcher_.started + " " + processes(group_.size()),
                 launcher_.howToStart + std::to_string(plan_.ranks) +
                     " (one process per rank of the plan)"};
  if (plan_.programs.size() != plan_.ranks)
    return Error{"the plan has " + std::to_string(plan_.programs.size()) +
                     " rank programs for " + std::to_string(plan_.ranks) +
                     " ranks",
                 "the plan is inconsistent; recompile it"};
  return Status();
}

Status ProcessPerRankRun::checkMemory() {
  std::vector<uint64_t> onHost = {hostBufferBytes()};
  group_.sumOnHost(onHost);
  // One message per host, from its first process.
  if (group_.hostRank() != 0)
    return Status();
  uint64_t limit = memoryLimitOf(options_);
  if (limit && onHost[0] > limit)
    return Error{"the " + std::to_string(group_.hostSize()) +
                     " ranks on this host need " +
                     formatByteSize(int64_t(onHost[0])) +
                     " of buffers at once (each rank's largest round), more "
                     "than the limit of " +
                     formatByteSize(int64_t(limit)),
                 "recompile the plan with a smaller --memory-budget, start "
                 "fewer ranks per host, or raise --memory-limit"};
  return Status();
}

DestinationOptions ProcessPerRankRun::destinationOptions() const {
  DestinationOptions options;
  options.overwrite = options_.overwrite;
  options.restart = options_.restart;
  options.planFingerprint = options_.planFingerprint;
  options.stopAfterFiles = options_.stopAfterFiles;
  return options;
}

Status ProcessPerRankRun::prepareWork() {
  // The files every rank has finished, agreed on by all.
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

  Expected<InstructionMask> live = liveInstructions(plan_, finishedFiles);
  if (!live.ok())
    // Every rank finds the same problem: rank 0 reports it, and the
    // agreement stops the others.
    return rank_ == 0 ? live.status() : Status();
  live_ = std::move(*live);
  std::vector<bool> neededSources(plan_.sourceFiles.size(), false);
  const plan::RankProgram &program = plan_.programs[rank_];
  for (size_t r = 0; r < program.rounds.size(); ++r) {
    const plan::Round &round = program.rounds[r];
    for (size_t i = 0; i < round.instructions.size(); ++i)
      if (live_[rank_][r][i] && round.instructions[i].opcode == Opcode::Read)
        neededSources[plan_.sourceTensors[round.instructions[i].tensor].file] =
            true;
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

size_t ProcessPerRankRun::roundCount() const {
  size_t rounds = 0;
  for (const plan::RankProgram &program : plan_.programs)
    rounds = std::max(rounds, program.rounds.size());
  return rounds;
}

bool ProcessPerRankRun::roundHasWork(size_t r) const {
  for (const auto &rounds : live_)
    if (r < rounds.size())
      for (uint8_t live : rounds[r])
        if (live)
          return true;
  return false;
}

RankRound ProcessPerRankRun::liveRound(size_t r) const {
  llvm::ArrayRef<uint8_t> live;
  if (r < live_[rank_].size())
    live = live_[rank_][r];
  return RankRound(plan_, rank_, r, live);
}

Status ProcessPerRankRun::runReads(const RankRound &round) {
  uint64_t bytes = 0;
  for (uint32_t i : round.reads())
    bytes += round.bufferBytes(round.instruction(i).buffer);
  bytesRead_ += bytes;
  return withoutRank(pool_->parallelFor(round.reads().size(), [&](size_t k) {
    return round.runRead(round.reads()[k], *sources_);
  }));
}

Status ProcessPerRankRun::runWrites(const RankRound &round) {
  return withoutRank(pool_->parallelFor(round.writes().size(), [&](size_t k) {
    return round.runWrite(round.writes()[k], *destinations_);
  }));
}

RankRunResult ProcessPerRankRun::run() {
  if (!agree(checkJob()))
    return finish();
  // Write coverage was verified with the plan (readPlanText, verifyPlan).
  Status checked = checkMemory(); // collective over the host
  if (checked.ok())
    checked = checkResources();
  if (!agree(checked))
    return finish();
  unsigned threads = options_.threads;
  if (!threads)
    threads = std::max(1u, defaultThreadCount() / group_.hostSize());
  pool_ = std::make_unique<ThreadPool>(threads);

  if (!writesFiles())
    return runIntoMemory();
  // Rank 0 prepares the shared directory, then every rank opens its files.
  Status prepared;
  if (rank_ == 0) {
    Expected<PreparedDestination> created = DestinationFiles::prepareDirectory(
        options_.destinationDirectory, options_.sourceDirectory,
        destinationOptions());
    if (created.ok()) {
      createdDirectory_ = created->created;
      destinationLock_ = std::move(created->lock);
    } else {
      prepared = created.error();
    }
  }
  if (!agree(prepared))
    return finish();
  DestinationOptions own = destinationOptions();
  own.rank = rank_;
  Expected<std::unique_ptr<DestinationFiles>> opened = DestinationFiles::open(
      plan_, options_.destinationDirectory, options_.sourceDirectory, own);
  Status openStatus = opened.status();
  if (opened.ok())
    destinations_ = std::move(*opened);
  if (!agree(openStatus))
    return failAfterOpen();
  if (!agree(prepareWork()))
    return failAfterOpen();

  std::vector<uint64_t> total = {destinations_->bytesToWrite()};
  group_.sum(total);
  if (progress_)
    progress_->start("aoa-run", total[0], destinations_->bytesWritten(),
                     othersWritten_);
  for (size_t r = 0; r < roundCount(); ++r)
    if (roundHasWork(r))
      ++result_.report.roundsRun;
  if (!runRounds())
    return failAfterOpen();
  if (progress_)
    progress_->stop();
  releaseBuffers();

  // Every rank's files are complete: each moves its own into place, then
  // rank 0 writes metadata.json with every rank's hashes.
  if (!agree(destinations_->moveFilesIntoPlace()))
    return failAfterOpen();
  std::vector<uint64_t> hashes = destinations_->tensorHashes();
  group_.bitwiseOrOnRankZero(hashes);
  if (!agree(rank_ == 0 ? destinations_->writeMetadata(hashes) : Status()))
    return failAfterOpen();
  if (options_.verify) {
    if (!agree(destinations_->verify(*pool_)))
      return finish();
    result_.report.verified = true;
  }

  sumTotals(destinations_->bytesWritten().load());
  result_.report.filesWritten =
      uint32_t(plan_.destinationFiles.size()) - result_.report.filesResumed;
  return finish();
}

RankRunResult ProcessPerRankRun::runIntoMemory() {
  if (!agree(prepareWork()) || !runRounds())
    return failAfterOpen();
  releaseBuffers();
  sumTotals(bytesWrittenToMemory_.load());
  return finish();
}

void ProcessPerRankRun::sumTotals(uint64_t bytesWritten) {
  std::vector<uint64_t> totals = {bytesRead_.load(), bytesExchanged_,
                                  bytesWritten, hostBufferBytes()};
  group_.sum(totals);
  RunReport &report = result_.report;
  report.bytesRead = totals[0];
  report.bytesExchanged = totals[1];
  report.bytesWritten = totals[2];
  report.peakBufferBytes = totals[3];
}

RankRunResult ProcessPerRankRun::failAfterOpen() {
  if (progress_)
    progress_->stop();
  releaseBuffers();
  std::vector<uint64_t> kept = {
      destinations_ && destinations_->anyFileFinished() ? 1u : 0u};
  group_.max(kept);
  result_.keptFinishedFiles = kept[0] != 0;
  if (!result_.keptFinishedFiles && writesFiles()) {
    if (destinations_)
      destinations_->releaseUnfinishedFiles();
    group_.barrier();
    if (rank_ == 0)
      DestinationFiles::removeStagingDirectory(options_.destinationDirectory,
                                               createdDirectory_);
  }
  return finish();
}

RankRunResult ProcessPerRankRun::finish() {
  if (progress_)
    progress_->stop();
  result_.report.ranks = plan_.ranks;
  result_.report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_)
          .count();
  return std::move(result_);
}

} // namespace aoa::runtime
