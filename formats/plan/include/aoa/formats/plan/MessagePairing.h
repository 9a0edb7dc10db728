//===- MessagePairing.h - Which send each recv takes ------------*- C++ -*-===//
//
// The pairing rule of a plan's exchanges, written once (docs/plan-format.md,
// "Rounds"): within a round, the j-th `recv` on rank B from rank A takes the
// j-th `send` of rank A to rank B, buffer by buffer. The plan verifier
// reports the pairs that do not match and the sends or recvs left over; the
// runtime hands buffers from sender to receiver along the same pairs.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_MESSAGEPAIRING_H
#define AOA_FORMATS_PLAN_MESSAGEPAIRING_H

#include "aoa/ir/Plan.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace aoa::plan {

/// The exchanges of one link (from, to) in one round, in program order:
/// the sends of `from` to `to` and the recvs of `to` from `from`
/// (instruction indices in the round). sends[j] pairs with recvs[j].
struct LinkMessages {
  std::vector<uint32_t> sends;
  std::vector<uint32_t> recvs;
};

/// Every link of round `round` that carries a send or a recv, ordered by
/// (from, to). Ranks without that round, and sends or recvs that name
/// themselves or a rank outside the plan as their peer, or move no
/// buffers (errors the verifier reports on their own), are left out.
std::map<std::pair<uint32_t, uint32_t>, LinkMessages>
roundMessages(const Plan &plan, size_t round);

/// One rank's side of the pairing, for processes that each hold only their
/// own program (Plan::onlyRank): over the rank's sends, the sum of a hash of
/// (round, sender, receiver, j, the dtypes and shapes moved) for the j-th
/// send on that link in that round; over its recvs, the same for the j-th
/// recv. Summed over all ranks, `sends` equals `recvs` when every send has
/// its recv moving the same types; a message without its partner makes the
/// sums differ (but with a chance of 2^-64).
struct ExchangeSignature {
  uint64_t sends = 0;
  uint64_t recvs = 0;
};
ExchangeSignature exchangeSignature(const Plan &plan, uint32_t rank);

} // namespace aoa::plan

#endif // AOA_FORMATS_PLAN_MESSAGEPAIRING_H
