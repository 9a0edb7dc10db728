//===- RunStaging.cpp - The destination, prepared and cleaned up ----------===//
//
// The destination's staging directory (DestinationFiles.h) is prepared once,
// by process 0, which holds DST's lock for the whole run; then every process
// opens the destination files it writes. After a failure the staging
// directory stays when any process finished a file (the next run resumes
// from it) and is removed otherwise, so a failure leaves nothing behind.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/exec/RunLifeCycle.h"

#include "aoa/runtime/exec/ProgressMeter.h"

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

bool RunLifeCycle::prepareDestination() {
  // With every rank in this process, DestinationFiles::open prepares the
  // directory itself (and holds the lock).
  if (scope_ == RankScope::AllRanks)
    return true;
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
  return agree(prepared);
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
  if (rank_ == 0)
    DestinationFiles::removeStagingDirectory(options_.destinationDirectory,
                                             createdDirectory_);
  return finish();
}

} // namespace aoa::runtime
