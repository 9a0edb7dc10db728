//===- RunStaging.cpp - The destination, prepared and cleaned up ----------===//
//
// The destination's staging directory (DestinationFiles.h) is prepared once,
// by process 0, which holds DST's lock for the whole run; then every process
// opens the destination files it writes. With RunOptions::nodeLocal every
// process has a DST of its own, which it prepares, locks and cleans up
// itself. After a failure the staging directory stays when any process
// finished a file (the next run resumes from it) and is removed otherwise,
// so a failure leaves nothing behind.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/exec/RunLifeCycle.h"

#include "aoa/runtime/exec/ProgressMeter.h"
#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/support/Messages.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace aoa::runtime {

DestinationOptions RunLifeCycle::destinationOptions() const {
  DestinationOptions options;
  options.overwrite = options_.overwrite;
  options.restart = options_.restart;
  options.planFingerprint = options_.planFingerprint;
  options.stopAfterFiles = options_.stopAfterFiles;
  if (scope_ == RankScope::OwnRank)
    options.rank = rank_;
  return options;
}

Status RunLifeCycle::checkDestinationsApart() const {
  // Two processes of one host given the same DST would take each other's
  // lock and mix their staging directories: name both ranks instead.
  std::error_code error;
  std::string path =
      fs::weakly_canonical(fs::absolute(options_.destinationDirectory), error)
          .lexically_normal()
          .string();
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  uint32_t processes = group_.hostSize(), position = group_.hostRank();
  // By position on the host: the path's hash (never 0), then the rank.
  std::vector<uint64_t> places(2 * size_t(processes), 0);
  places[position] = contentHash(path.data(), path.size()) | 1;
  places[processes + position] = rank_;
  group_.sumOnHost(places);
  for (uint32_t other = 0; other < position; ++other)
    if (places[other] == places[position])
      return Error{"ranks " + std::to_string(places[processes + other]) +
                       " and " + std::to_string(rank_) +
                       " run on one host and were given the same "
                       "destination directory " +
                       quoteName(options_.destinationDirectory),
                   "with --node-local every rank writes a directory of its "
                   "own: put {rank} in --dst-dir (e.g. --dst-dir "
                   "'out/rank{rank}'), which each process replaces with its "
                   "rank"};
  return Status();
}

bool RunLifeCycle::prepareDestination() {
  // With every rank in this process, DestinationFiles::open prepares the
  // directory itself (and holds the lock).
  if (scope_ == RankScope::AllRanks)
    return true;
  Status prepared =
      options_.nodeLocal ? checkDestinationsApart() : Status(); // collective
  bool createdStaging = false;
  if (prepared.ok() && (rank_ == 0 || options_.nodeLocal)) {
    Expected<PreparedDestination> created = DestinationFiles::prepareDirectory(
        options_.destinationDirectory, options_.sourceDirectory,
        destinationOptions());
    if (created.ok()) {
      createdDirectory_ = created->created;
      createdStaging = created->createdStaging;
      destinationLock_ = std::move(created->lock);
    } else {
      prepared = created.error();
    }
  }
  if (agree(prepared))
    return true;
  // Another rank refused: a node-local DST is left as it was, like the
  // refusing rank's own.
  if (prepared.ok() && createdStaging)
    DestinationFiles::removeStagingDirectory(options_.destinationDirectory,
                                             createdDirectory_);
  return false;
}

bool RunLifeCycle::openDestination() {
  Expected<std::unique_ptr<DestinationFiles>> opened =
      DestinationFiles::open(plan_, options_.destinationDirectory,
                             options_.sourceDirectory, destinationOptions());
  Status status = opened.status();
  if (opened.ok())
    destinations_ = std::move(*opened);
  return agree(status);
}

RankRunResult RunLifeCycle::failAfterOpen() {
  if (progress_)
    progress_->stop();
  releaseBuffers();
  std::vector<uint64_t> kept = {
      destinations_ && destinations_->anyFileFinished() ? 1u : 0u};
  group_.max(kept);
  result_.keptFinishedFiles = kept[0] != 0;
  if (result_.keptFinishedFiles || !writesFiles())
    return finish();
  if (scope_ == RankScope::AllRanks) {
    // open() prepared the directory (or undid what it created).
    if (destinations_)
      destinations_->cleanUpAfterFailure();
    return finish();
  }
  if (destinations_)
    destinations_->releaseUnfinishedFiles();
  group_.barrier();
  if (rank_ == 0 || options_.nodeLocal)
    DestinationFiles::removeStagingDirectory(options_.destinationDirectory,
                                             createdDirectory_);
  return finish();
}

} // namespace aoa::runtime
