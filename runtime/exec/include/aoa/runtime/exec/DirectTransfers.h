//===- DirectTransfers.h - Reads whose bytes reach a write unchanged -*- C++ -*-===//
//
// A layout-only conversion mostly moves byte ranges: a read fills a buffer,
// the buffer travels to another rank or not, and one write stores it. The
// bytes the write stores are then exactly the bytes of the read's runs, so
// the local backend can copy them file to file inside the kernel
// (copy_file_range), piece by piece where a run of the read meets a run of
// the write, instead of through user memory. This finds those pairs among a
// round's live instructions.
//
// A pair is a read on rank P whose buffer has exactly one live use, which is
// either a write on P or a send, alone or with other buffers, whose matching
// recv's corresponding buffer has exactly one live use, a write; no copy lies
// in between. Both regions must lie in their stored tensors (flat ranges
// included), be of the same dtype and byte count, with buffers of that size,
// and either both be one run of bytes or meet in pieces of at least 4 KiB on
// average (one copy_file_range call per piece costs about as much as
// copying a few KiB through a buffer); anything else is left to the
// ordinary path, which also reports inconsistent plans.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_DIRECTTRANSFERS_H
#define AOA_RUNTIME_EXEC_DIRECTTRANSFERS_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/MessageMatching.h"
#include "aoa/runtime/exec/RankRound.h"

#include <cstdint>
#include <vector>

namespace aoa::runtime {

/// Instructions by their index in their rank's round.
struct DirectTransfer {
  uint32_t readRank = 0;
  uint32_t read = 0;
  uint32_t writeRank = 0;
  uint32_t write = 0;
};

/// The direct transfers of one round. `ranks[p]` is rank p's RankRound of
/// the round (its live instructions); `messages` is matchMessages' answer
/// for the round (may be empty when the round has no messages).
std::vector<DirectTransfer>
findDirectTransfers(const plan::Plan &plan, const std::vector<RankRound> &ranks,
                    const std::vector<std::vector<SendRef>> &messages);

/// The direct transfers inside one rank's `round`: reads whose only live use
/// is a write of the same rank (what a process that knows only its own
/// rank's program can copy file to file).
std::vector<DirectTransfer> directTransfersOnRank(const plan::Plan &plan,
                                                  const RankRound &round);

/// Per instruction of `round` (rank `round.rank()`'s), whether it is a read
/// or a write of `direct` on that rank (RankRound::buffersInArena).
std::vector<uint8_t> copiedDirectly(const RankRound &round,
                                    const std::vector<DirectTransfer> &direct);

/// The arena bytes each round of `rank` needs with all its instructions
/// live, the transfers of directTransfersOnRank copied file to file when
/// `copyDirectly`. No run needs more in that round: a resumed run's live
/// instructions are fewer (a read lives only while its one write does, so
/// a direct pair stays one), and the local backend copies pairs across
/// ranks too.
std::vector<uint64_t> arenaBytesByRound(const plan::Plan &plan, uint32_t rank,
                                        ReceivedBuffers received,
                                        bool copyDirectly);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_DIRECTTRANSFERS_H
