//===- MessageMatching.cpp ------------------------------------------------===//
#include "aoa/runtime/exec/MessageMatching.h"

#include "aoa/formats/plan/MessagePairing.h"

namespace aoa::runtime {

Expected<std::vector<std::vector<SendRef>>> matchMessages(const plan::Plan &plan,
                                                          size_t round) {
  std::vector<std::vector<SendRef>> matches(plan.programs.size());
  for (uint32_t rank = 0; rank < plan.programs.size(); ++rank)
    if (round < plan.programs[rank].rounds.size())
      matches[rank].assign(plan.programs[rank].rounds[round].instructions.size(),
                           SendRef());
  auto where = [&](uint32_t rank) {
    return "rank " + std::to_string(rank) + ", round " + std::to_string(round);
  };
  const char *hint = "the plan's messages do not pair up; recompile it";
  for (const auto &[link, messages] : plan::roundMessages(plan, round)) {
    auto [from, to] = link;
    if (messages.recvs.size() > messages.sends.size())
      return Error{where(to) + ": a recv from rank " + std::to_string(from) +
                       " has no matching send",
                   hint};
    if (messages.sends.size() > messages.recvs.size())
      return Error{where(from) + ": a send to rank " + std::to_string(to) +
                       " has no matching recv",
                   hint};
    const plan::Round &senderRound = plan.programs[from].rounds[round];
    const plan::Round &receiverRound = plan.programs[to].rounds[round];
    for (size_t j = 0; j < messages.sends.size(); ++j) {
      const plan::Instruction &send = senderRound.instructions[messages.sends[j]];
      const plan::Instruction &recv = receiverRound.instructions[messages.recvs[j]];
      bool sameBuffers = send.buffers.size() == recv.buffers.size();
      for (size_t b = 0; sameBuffers && b < send.buffers.size(); ++b)
        sameBuffers = senderRound.buffers[send.buffers[b]].bytes() ==
                      receiverRound.buffers[recv.buffers[b]].bytes();
      if (!sameBuffers)
        return Error{where(to) + ": a recv from rank " + std::to_string(from) +
                         " does not match the buffers its send carries",
                     hint};
      matches[to][messages.recvs[j]] = SendRef{from, messages.sends[j]};
    }
  }
  return matches;
}

} // namespace aoa::runtime
