//===- RunInstall.cpp - The files into DST, metadata.json, --verify -------===//
//
// Only when every process's files are complete do they move into DST; then
// process 0 writes metadata.json, last, with every process's tensor hashes,
// so DST never shows a partial checkpoint (DestinationFiles.h). With
// RunOptions::nodeLocal that is rank 0's DST; the other ranks then remove
// their own staging directories. --verify then reads every installed file
// back and checks its hashes.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/exec/RunLifeCycle.h"

namespace aoa::runtime {

bool RunLifeCycle::install() {
  if (!agree(destinations_->moveFilesIntoPlace()))
    return false;
  std::vector<uint64_t> hashes = destinations_->tensorHashes();
  group_.bitwiseOrOnRankZero(hashes);
  if (!agree(rank_ == 0 ? destinations_->writeMetadata(hashes) : Status()))
    return false;
  if (!options_.nodeLocal)
    return true;
  // Only once the checkpoint is complete: a kill before leaves every
  // journal, and the same command finishes the run.
  return agree(rank_ == 0 ? Status() : destinations_->removeStaging());
}

bool RunLifeCycle::verify() {
  if (!agree(destinations_->verify(*pool_)))
    return false;
  result_.report.verified = true;
  return true;
}

} // namespace aoa::runtime
