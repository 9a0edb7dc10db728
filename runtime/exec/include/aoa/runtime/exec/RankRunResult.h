//===- RankRunResult.h - How one rank's run of a plan ended -----*- C++ -*-===//
//
// The backends that run one process per rank (mpi, nccl) report, on every
// rank, its own failure, the ranks that failed, and on success the totals
// over all ranks.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_RANKRUNRESULT_H
#define AOA_RUNTIME_EXEC_RANKRUNRESULT_H

#include "aoa/runtime/exec/RunOptions.h"
#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace aoa::runtime {

struct RankRunResult {
  /// This rank's own failure, if it had one.
  std::optional<Error> error;
  /// Every rank that failed (the same list on every rank); empty on
  /// success.
  std::vector<uint32_t> failedRanks;
  /// After a failure: finished files are kept in DST/.aoa-run for the next
  /// run to resume from.
  bool keptFinishedFiles = false;
  /// On success: the totals over all ranks (peakBufferBytes sums each
  /// rank's largest round).
  RunReport report;

  bool ok() const { return failedRanks.empty(); }

  /// A failure of this rank before the run could start (every rank fails
  /// alike, e.g. a build without the backend).
  static RankRunResult failure(Error error, uint32_t rank) {
    RankRunResult result;
    result.error = std::move(error);
    result.failedRanks = {rank};
    return result;
  }
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_RANKRUNRESULT_H
