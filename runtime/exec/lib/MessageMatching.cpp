//===- MessageMatching.cpp ------------------------------------------------===//
#include "aoa/runtime/exec/MessageMatching.h"

#include <map>

namespace aoa::runtime {

Expected<std::vector<std::vector<SendRef>>> matchMessages(const plan::Plan &plan,
                                                          size_t round) {
  std::vector<std::vector<SendRef>> matches(plan.programs.size());
  // (sender, receiver) -> the sender's sends to the receiver, in order.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> sends;
  for (uint32_t rank = 0; rank < plan.programs.size(); ++rank) {
    const plan::RankProgram &program = plan.programs[rank];
    if (round >= program.rounds.size())
      continue;
    const plan::Round &r = program.rounds[round];
    matches[rank].assign(r.instructions.size(), SendRef());
    for (uint32_t i = 0; i < r.instructions.size(); ++i)
      if (r.instructions[i].opcode == plan::Opcode::Send)
        sends[{rank, r.instructions[i].peer}].push_back(i);
  }
  auto where = [&](uint32_t rank) {
    return "rank " + std::to_string(rank) + ", round " + std::to_string(round);
  };
  const char *hint = "the plan's messages do not pair up; recompile it";
  for (uint32_t rank = 0; rank < plan.programs.size(); ++rank) {
    const plan::RankProgram &program = plan.programs[rank];
    if (round >= program.rounds.size())
      continue;
    const plan::Round &r = program.rounds[round];
    for (uint32_t i = 0; i < r.instructions.size(); ++i) {
      const plan::Instruction &recv = r.instructions[i];
      if (recv.opcode != plan::Opcode::Recv)
        continue;
      auto it = sends.find({recv.peer, rank});
      if (it == sends.end() || it->second.empty())
        return Error{where(rank) + ": a recv from rank " +
                         std::to_string(recv.peer) + " has no matching send",
                     hint};
      uint32_t sendIndex = it->second.front();
      it->second.erase(it->second.begin());
      const plan::Round &senderRound = plan.programs[recv.peer].rounds[round];
      const plan::Instruction &send = senderRound.instructions[sendIndex];
      bool sameBuffers = send.buffers.size() == recv.buffers.size();
      for (size_t b = 0; sameBuffers && b < send.buffers.size(); ++b)
        sameBuffers = senderRound.buffers[send.buffers[b]].bytes() ==
                      r.buffers[recv.buffers[b]].bytes();
      if (!sameBuffers)
        return Error{where(rank) + ": a recv from rank " +
                         std::to_string(recv.peer) +
                         " does not match the buffers its send carries",
                     hint};
      matches[rank][i] = SendRef{recv.peer, sendIndex};
    }
  }
  for (const auto &[pair, left] : sends)
    if (!left.empty())
      return Error{where(pair.first) + ": a send to rank " +
                       std::to_string(pair.second) + " has no matching recv",
                   hint};
  return matches;
}

} // namespace aoa::runtime
