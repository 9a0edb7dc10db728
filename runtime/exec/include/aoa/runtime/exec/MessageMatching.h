//===- MessageMatching.h - Which send each receive gets ---------*- C++ -*-===//
//
// Within a round, the k-th `recv` on rank R from rank P receives the k-th
// `send` on P to R, buffer by buffer (the plan's rule, MessagePairing.h in
// formats/plan). The local backend hands the sender's buffers to the
// receiver through this pairing, and resuming uses it to drop sends whose
// data nobody needs.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_MESSAGEMATCHING_H
#define AOA_RUNTIME_EXEC_MESSAGEMATCHING_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <vector>

namespace aoa::runtime {

struct SendRef {
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t rank = kNone;        ///< the sending rank
  uint32_t instruction = kNone; ///< its send, in the round
};

/// For round `round`: per rank, per instruction, the matching send of each
/// recv (kNone for other instructions). Fails when a recv has no send, a
/// send has no recv, or the buffers of a pair differ in count or size.
Expected<std::vector<std::vector<SendRef>>> matchMessages(const plan::Plan &plan,
                                                          size_t round);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_MESSAGEMATCHING_H
