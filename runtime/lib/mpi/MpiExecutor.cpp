//===- MpiExecutor.cpp ----------------------------------------------------===//
#include "aoa/runtime/MpiExecutor.h"

#include "MpiHandles.h"
#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/DestinationFiles.h"
#include "aoa/runtime/LiveInstructions.h"
#include "aoa/runtime/ProgressMeter.h"
#include "aoa/runtime/RankRound.h"
#include "aoa/runtime/SourceFiles.h"
#include "aoa/runtime/ThreadPool.h"
#include "aoa/runtime/WriteCoverage.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <unistd.h>

namespace aoa::runtime {

namespace {

using plan::Opcode;

/// MPI tags are at least 15 bits; rounds are separated by agreements, so
/// the tag only helps a reader of a trace.
constexpr uint32_t kTagModulus = 32768;

/// RankRound's errors start with "rank R, round N: "; an mpi rank's errors
/// are already printed as its own, so "round N: " is enough.
Status withoutRank(Status status, uint32_t rank) {
  if (status.ok())
    return status;
  Error error = status.error();
  std::string prefix = "rank " + std::to_string(rank) + ", ";
  if (error.message.compare(0, prefix.size(), prefix) == 0)
    error.message.erase(0, prefix.size());
  return error;
}

class MpiRun {
public:
  MpiRun(const plan::Plan &plan, const RunOptions &options,
         const MpiSession &session, ProgressMeter *progress)
      : plan_(plan), options_(options), session_(session),
        progress_(session.rank() == 0 ? progress : nullptr),
        rank_(session.rank()) {}

  MpiRunResult run();

private:
  /// Every rank says whether `status` failed; true when none did. This
  /// rank's first failure is kept for its report. Also shares the bytes
  /// written so far, for rank 0's progress.
  bool agree(const Status &status);

  Status checkJob() const;
  /// Sizes this rank's arena and checks the memory of this host's ranks;
  /// collective over the host.
  Status checkMemory();
  DestinationOptions destinationOptions() const;
  /// After opening: what is left to do, and the source files for it.
  Status prepareWork();
  bool roundHasWork(size_t r) const;
  Status runReads(RankRound &round);
  void exchange(RankRound &round);
  Status runCopiesAndWrites(RankRound &round);

  /// After a failure once the files were opened: keeps the staging
  /// directory when any rank has a finished file, else removes it.
  MpiRunResult failAfterOpen();
  MpiRunResult finish();

  const plan::Plan &plan_;
  const RunOptions &options_;
  const MpiSession &session_;
  ProgressMeter *progress_;
  uint32_t rank_;
  std::chrono::steady_clock::time_point started_ =
      std::chrono::steady_clock::now();
  MpiRunResult result_;

  std::unique_ptr<ThreadPool> pool_;
  bool createdDirectory_ = false; ///< by rank 0's prepareDirectory
  std::unique_ptr<DestinationFiles> destinations_;
  std::optional<SourceFiles> sources_;
  InstructionMask live_;
  uint64_t arenaBytes_ = 0;
  std::unique_ptr<uint8_t[]> arena_;
  /// Bytes the other ranks had written at the last agreement.
  std::atomic<uint64_t> othersWritten_{0};
  uint64_t bytesRead_ = 0;
  uint64_t bytesExchanged_ = 0;
};

bool MpiRun::agree(const Status &status) {
  uint32_t size = session_.size();
  uint64_t written =
      destinations_ ? destinations_->bytesWritten().load() : uint64_t(0);
  std::vector<uint64_t> values(size + 1, 0);
  values[rank_] = status.ok() ? 0 : 1;
  values[size] = written;
  session_.sum(values);
  if (!status.ok() && !result_.error)
    result_.error = status.error();
  othersWritten_ = values[size] - written;
  result_.failedRanks.clear();
  for (uint32_t r = 0; r < size; ++r)
    if (values[r])
      result_.failedRanks.push_back(r);
  return result_.failedRanks.empty();
}

Status MpiRun::checkJob() const {
  if (session_.size() != plan_.ranks)
    return Error{"the plan has " + std::to_string(plan_.ranks) +
                     (plan_.ranks == 1 ? " rank" : " ranks") +
                     ", but mpirun started " + std::to_string(session_.size()) +
                     (session_.size() == 1 ? " process" : " processes"),
                 "run it with mpirun -np " + std::to_string(plan_.ranks) +
                     " (one process per rank of the plan)"};
  if (plan_.programs.size() != plan_.ranks)
    return Error{"the plan has " + std::to_string(plan_.programs.size()) +
                     " rank programs for " + std::to_string(plan_.ranks) +
                     " ranks",
                 "the plan is inconsistent; recompile it"};
  return Status();
}

Status MpiRun::checkMemory() {
  arenaBytes_ = largestRoundArenaBytes(plan_, rank_, ReceivedBuffers::Owned);
  std::vector<uint64_t> onHost = {arenaBytes_};
  session_.sumOnHost(onHost);
  // One message per host, from its first process.
  if (session_.hostRank() != 0)
    return Status();
  uint64_t limit =
      memoryLimitOf(options_);
  if (limit && onHost[0] > limit)
    return Error{"the " + std::to_string(session_.hostSize()) +
                     " ranks on this host need " +
                     formatByteSize(int64_t(onHost[0])) +
                     " of buffers at once (each rank's largest round), more "
                     "than the limit of " +
                     formatByteSize(int64_t(limit)),
                 "recompile the plan with a smaller --memory-budget, start "
                 "fewer ranks per host, or raise --memory-limit"};
  return Status();
}

DestinationOptions MpiRun::destinationOptions() const {
  DestinationOptions options;
  options.overwrite = options_.overwrite;
  options.restart = options_.restart;
  options.planFingerprint = options_.planFingerprint;
  options.stopAfterFiles = options_.stopAfterFiles;
  return options;
}

Status MpiRun::prepareWork() {
  // The files every rank has finished, agreed on by all.
  std::vector<bool> own = destinations_->finishedFiles();
  std::vector<uint64_t> finished(own.begin(), own.end());
  finished.push_back(destinations_->resumedFileCount());
  session_.max(finished);
  std::vector<uint64_t> resumed = {destinations_->resumedFileCount()};
  session_.sum(resumed);
  result_.report.filesResumed = uint32_t(resumed[0]);
  std::vector<bool> finishedFiles(plan_.destinationFiles.size());
  for (size_t f = 0; f < finishedFiles.size(); ++f)
    finishedFiles[f] = finished[f] != 0;

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
  if (arenaBytes_) {
    arena_.reset(new (std::nothrow) uint8_t[arenaBytes_]);
    if (!arena_)
      return Error{"cannot allocate " + formatByteSize(int64_t(arenaBytes_)) +
                       " for the buffers of this rank's largest round",
                   "recompile the plan with a smaller --memory-budget, or "
                   "start fewer ranks per host"};
  }
  return destinations_->finishEmptyFiles();
}

bool MpiRun::roundHasWork(size_t r) const {
  for (const auto &rounds : live_)
    if (r < rounds.size())
      for (uint8_t live : rounds[r])
        if (live)
          return true;
  return false;
}

Status MpiRun::runReads(RankRound &round) {
  for (uint32_t i : round.reads())
    bytesRead_ += round.bufferBytes(round.instruction(i).buffer);
  Status status = pool_->parallelFor(round.reads().size(), [&](size_t k) {
    return round.runRead(round.reads()[k], *sources_);
  });
  return withoutRank(std::move(status), rank_);
}

void MpiRun::exchange(RankRound &round) {
  if (round.sends().empty() && round.receives().empty())
    return;
  MPI_Comm world = session_.handles().world;
  int tag = int(round.roundNumber() % kTagModulus);
  std::vector<MPI_Request> requests;
  std::vector<MPI_Datatype> types;
  // A message is its buffers back to back: one derived datatype over the
  // buffers' addresses sends (or receives) them in place.
  auto post = [&](uint32_t i, bool send) {
    const plan::Instruction &inst = round.instruction(i);
    std::vector<int> lengths;
    std::vector<MPI_Aint> addresses;
    for (uint32_t b : inst.buffers) {
      uint8_t *data = round.buffer(b);
      uint64_t bytes = round.bufferBytes(b);
      if (!send)
        bytesExchanged_ += bytes;
      for (uint64_t offset = 0; offset < bytes; offset += kMpiChunkElements) {
        MPI_Aint address;
        MPI_Get_address(data + offset, &address);
        addresses.push_back(address);
        lengths.push_back(
            int(std::min<uint64_t>(kMpiChunkElements, bytes - offset)));
      }
    }
    MPI_Datatype type;
    MPI_Type_create_hindexed(int(lengths.size()), lengths.data(),
                             addresses.data(), MPI_BYTE, &type);
    MPI_Type_commit(&type);
    types.push_back(type);
    requests.emplace_back();
    if (send)
      MPI_Isend(MPI_BOTTOM, 1, type, int(inst.peer), tag, world,
                &requests.back());
    else
      MPI_Irecv(MPI_BOTTOM, 1, type, int(inst.peer), tag, world,
                &requests.back());
  };
  // Sends and receives to one peer pair up in program order (MPI does not
  // let messages of one sender and tag overtake each other).
  for (uint32_t i : round.receives())
    post(i, false);
  for (uint32_t i : round.sends())
    post(i, true);
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (MPI_Datatype &type : types)
    MPI_Type_free(&type);
}

Status MpiRun::runCopiesAndWrites(RankRound &round) {
  for (const std::vector<uint32_t> &level : round.copyLevels())
    if (Status status = pool_->parallelFor(
            level.size(), [&](size_t k) { return round.runCopy(level[k]); });
        !status.ok())
      return withoutRank(std::move(status), rank_);
  Status status = pool_->parallelFor(round.writes().size(), [&](size_t k) {
    return round.runWrite(round.writes()[k], *destinations_);
  });
  return withoutRank(std::move(status), rank_);
}

MpiRunResult MpiRun::run() {
  if (!agree(checkJob()))
    return finish();
  Status checked = rank_ == 0 ? checkWriteCoverage(plan_) : Status();
  Status memory = checkMemory(); // collective: every rank calls it
  if (checked.ok())
    checked = memory;
  if (!agree(checked))
    return finish();
  unsigned threads = options_.threads;
  if (!threads)
    threads = std::max(1u, defaultThreadCount() / session_.hostSize());
  pool_ = std::make_unique<ThreadPool>(threads);

  // Rank 0 prepares the shared directory, then every rank opens its files.
  Status prepared;
  if (rank_ == 0) {
    Expected<bool> created = DestinationFiles::prepareDirectory(
        options_.destinationDirectory, options_.sourceDirectory,
        destinationOptions());
    if (created.ok())
      createdDirectory_ = *created;
    else
      prepared = created.error();
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
  session_.sum(total);
  if (progress_)
    progress_->start("aoa-run", total[0], destinations_->bytesWritten(),
                     othersWritten_);
  size_t rounds = 0;
  for (const plan::RankProgram &program : plan_.programs)
    rounds = std::max(rounds, program.rounds.size());
  // Each round's agreement, before its messages are posted, also covers
  // the copies and writes of the round before.
  Status pending;
  for (size_t r = 0; r < rounds; ++r) {
    if (!roundHasWork(r))
      continue;
    ++result_.report.roundsRun;
    llvm::ArrayRef<uint8_t> live;
    if (r < live_[rank_].size())
      live = live_[rank_][r];
    RankRound round(plan_, rank_, r, live);
    if (!round.empty())
      round.layOutBuffers(arena_.get(), ReceivedBuffers::Owned);
    if (pending.ok())
      pending = runReads(round);
    if (!agree(pending))
      return failAfterOpen();
    exchange(round);
    pending = runCopiesAndWrites(round);
  }
  if (!agree(pending))
    return failAfterOpen();
  if (progress_)
    progress_->stop();
  arena_.reset();

  // Every rank's files are complete: each moves its own into place, then
  // rank 0 writes metadata.json with every rank's hashes.
  if (!agree(destinations_->moveFilesIntoPlace()))
    return failAfterOpen();
  std::vector<uint64_t> hashes = destinations_->tensorHashes();
  session_.bitwiseOrOnRankZero(hashes);
  if (!agree(rank_ == 0 ? destinations_->writeMetadata(hashes) : Status()))
    return failAfterOpen();
  if (options_.verify) {
    if (!agree(destinations_->verify(*pool_)))
      return finish();
    result_.report.verified = true;
  }

  std::vector<uint64_t> totals = {bytesRead_, bytesExchanged_,
                                  destinations_->bytesWritten().load(),
                                  arenaBytes_};
  session_.sum(totals);
  RunReport &report = result_.report;
  report.bytesRead = totals[0];
  report.bytesExchanged = totals[1];
  report.bytesWritten = totals[2];
  report.peakBufferBytes = totals[3];
  report.filesWritten =
      uint32_t(plan_.destinationFiles.size()) - report.filesResumed;
  return finish();
}

MpiRunResult MpiRun::failAfterOpen() {
  if (progress_)
    progress_->stop();
  std::vector<uint64_t> kept = {
      destinations_ && destinations_->anyFileFinished() ? 1u : 0u};
  session_.max(kept);
  result_.keptFinishedFiles = kept[0] != 0;
  if (!result_.keptFinishedFiles) {
    if (destinations_)
      destinations_->releaseUnfinishedFiles();
    session_.barrier();
    if (rank_ == 0)
      DestinationFiles::removeStagingDirectory(options_.destinationDirectory,
                                               createdDirectory_);
  }
  return finish();
}

MpiRunResult MpiRun::finish() {
  if (progress_)
    progress_->stop();
  result_.report.ranks = plan_.ranks;
  result_.report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_)
          .count();
  return std::move(result_);
}

} // namespace

MpiRunResult runPlanWithMpi(const plan::Plan &plan, const RunOptions &options,
                            const MpiSession &session,
                            ProgressMeter *progress) {
  return MpiRun(plan, options, session, progress).run();
}

} // namespace aoa::runtime
