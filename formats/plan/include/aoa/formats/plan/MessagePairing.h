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

} // namespace aoa::plan

#endif // AOA_FORMATS_PLAN_MESSAGEPAIRING_H
