//===- RunLifeCycle.cpp - The stages of a run, in order -------------------===//
#include "aoa/runtime/exec/RunLifeCycle.h"

#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/exec/ProgressMeter.h"

#include <algorithm>

namespace aoa::runtime {

RunLifeCycle::RunLifeCycle(const plan::Plan &plan, const RunOptions &options,
                           const RankGroup &group, RankScope scope,
                           ProgressMeter *progress, JobLauncher launcher)
    : plan_(plan), options_(options), group_(group), scope_(scope),
      rank_(group.rank()), progress_(group.rank() == 0 ? progress : nullptr),
      launcher_(std::move(launcher)) {}

RunLifeCycle::~RunLifeCycle() = default;

Status RunLifeCycle::withoutRank(Status status) const {
  if (status.ok() || scope_ == RankScope::AllRanks)
    return status;
  Error error = status.error();
  std::string prefix = "rank " + std::to_string(rank_) + ", ";
  if (error.message.compare(0, prefix.size(), prefix) == 0)
    error.message.erase(0, prefix.size());
  return error;
}

Status RunLifeCycle::checkInterrupted() const {
  if (!options_.interrupted || !options_.interrupted())
    return Status();
  return Error{"interrupted",
               writesFiles() ? "nothing was installed in the destination; the "
                               "same run resumes from the files it finished"
                             : ""};
}

bool RunLifeCycle::agree(const Status &status) {
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

Status RunLifeCycle::checkJob() const {
  auto processes = [](uint32_t n) {
    return std::to_string(n) + (n == 1 ? " process" : " processes");
  };
  if (scope_ == RankScope::OwnRank && group_.size() != plan_.ranks)
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

std::string RunLifeCycle::largestRound() const {
  uint32_t largestRank = 0;
  size_t largestIndex = 0;
  int64_t largestBytes = -1;
  for (uint32_t rank : ranksRun()) {
    size_t rounds = plan_.programs[rank].rounds.size();
    for (size_t k = 0; k < rounds; ++k)
      if (int64_t bytes = int64_t(roundBufferBytes(rank, k));
          bytes > largestBytes) {
        largestBytes = bytes;
        largestRank = rank;
        largestIndex = k;
      }
  }
  if (largestBytes < 0)
    return "";
  // A process of the mpi or nccl backend knows only its own rank's rounds.
  if (scope_ == RankScope::OwnRank)
    return "; rank " + std::to_string(largestRank) + "'s largest is round " +
           std::to_string(largestIndex) + ", " + formatByteSize(largestBytes);
  return "; the largest is rank " + std::to_string(largestRank) + "'s round " +
         std::to_string(largestIndex) + ", " + formatByteSize(largestBytes);
}

Status RunLifeCycle::checkMemory() {
  std::vector<uint64_t> onHost = {hostBufferBytes()};
  group_.sumOnHost(onHost);
  // One message per host, from its first process.
  if (group_.hostRank() != 0)
    return Status();
  uint64_t limit = memoryLimitOf(options_);
  if (!limit || onHost[0] <= limit)
    return Status();
  std::string need = formatByteSize(int64_t(onHost[0])) +
                     " of buffers at once (each rank's largest round), more "
                     "than the limit of " +
                     formatByteSize(int64_t(limit)) + largestRound();
  if (scope_ == RankScope::AllRanks)
    return Error{"running all " + std::to_string(plan_.ranks) +
                     " ranks in one process needs " + need,
                 "recompile the plan with a smaller --memory-budget (the "
                 "local backend holds every rank's buffers), or raise "
                 "--memory-limit"};
  return Error{"the " + std::to_string(group_.hostSize()) +
                   " ranks on this host need " + need,
               "recompile the plan with a smaller --memory-budget, start "
               "fewer ranks per host, or raise --memory-limit"};
}

RankRunResult RunLifeCycle::run() {
  if (!agree(checkJob()))
    return finish();
  // Write coverage was verified with the plan (formats/plan's verifier).
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
  if (!prepareDestination())
    return finish();
  if (!openDestination() || !agree(prepareWork()))
    return failAfterOpen();
  agreeOnRoundsWithWork();

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

  if (!install())
    return failAfterOpen();
  if (options_.verify && !verify())
    return finish();
  sumTotals(destinations_->bytesWritten().load());
  result_.report.filesWritten =
      uint32_t(plan_.destinationFiles.size()) - result_.report.filesResumed;
  return finish();
}

RankRunResult RunLifeCycle::runIntoMemory() {
  if (!agree(prepareWork()))
    return failAfterOpen();
  agreeOnRoundsWithWork();
  if (!runRounds())
    return failAfterOpen();
  releaseBuffers();
  sumTotals(bytesWrittenToMemory_.load());
  return finish();
}

void RunLifeCycle::sumTotals(uint64_t bytesWritten) {
  std::vector<uint64_t> totals = {bytesRead_.load(), bytesExchanged_,
                                  bytesWritten, hostBufferBytes(),
                                  bytesCopiedDirectly_.load()};
  group_.sum(totals);
  RunReport &report = result_.report;
  report.bytesRead = totals[0];
  report.bytesExchanged = totals[1];
  report.bytesWritten = totals[2];
  report.peakBufferBytes = totals[3];
  report.bytesCopiedDirectly = totals[4];
}

RankRunResult RunLifeCycle::finish() {
  if (progress_)
    progress_->stop();
  result_.report.ranks = plan_.ranks;
  result_.report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_)
          .count();
  return std::move(result_);
}

} // namespace aoa::runtime
