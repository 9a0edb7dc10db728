//===- MessagePairing.cpp -------------------------------------------------===//
#include "aoa/formats/plan/MessagePairing.h"

namespace aoa::plan {

std::map<std::pair<uint32_t, uint32_t>, LinkMessages>
roundMessages(const Plan &plan, size_t round) {
  std::map<std::pair<uint32_t, uint32_t>, LinkMessages> links;
  for (uint32_t rank = 0; rank < plan.programs.size(); ++rank) {
    const RankProgram &program = plan.programs[rank];
    if (round >= program.rounds.size())
      continue;
    const std::vector<Instruction> &list = program.rounds[round].instructions;
    for (uint32_t i = 0; i < list.size(); ++i) {
      const Instruction &in = list[i];
      if (in.peer >= plan.programs.size() || in.peer == rank || in.buffers.empty())
        continue;
      if (in.opcode == Opcode::Send)
        links[{rank, in.peer}].sends.push_back(i);
      else if (in.opcode == Opcode::Recv)
        links[{in.peer, rank}].recvs.push_back(i);
    }
  }
  return links;
}

} // namespace aoa::plan
