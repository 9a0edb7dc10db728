//===- LiveInstructions.cpp -----------------------------------------------===//
#include "aoa/runtime/exec/LiveInstructions.h"

namespace aoa::runtime {

namespace {

/// Calls visit(rank, round) for every rank that has round `r`.
template <typename Visit>
void forEachRankRound(const plan::Plan &plan, size_t r, Visit visit) {
  for (size_t rank = 0; rank < plan.programs.size(); ++rank)
    if (r < plan.programs[rank].rounds.size())
      visit(rank, plan.programs[rank].rounds[r]);
}

} // namespace

Expected<InstructionMask> liveInstructions(const plan::Plan &plan,
                                           const std::vector<bool> &finishedFiles) {
  using plan::Opcode;
  size_t ranks = plan.programs.size();
  InstructionMask live(ranks);
  size_t rounds = 0;
  for (size_t rank = 0; rank < ranks; ++rank) {
    const plan::RankProgram &program = plan.programs[rank];
    rounds = std::max(rounds, program.rounds.size());
    live[rank].resize(program.rounds.size());
    for (size_t r = 0; r < program.rounds.size(); ++r)
      live[rank][r].assign(program.rounds[r].instructions.size(), 1);
  }
  bool anyFinished = false;
  for (bool finished : finishedFiles)
    anyFinished |= finished;
  if (!anyFinished)
    return live;

  for (size_t r = 0; r < rounds; ++r) {
    // used[rank][buffer]: some live instruction reads it.
    std::vector<std::vector<uint8_t>> used(ranks);
    forEachRankRound(plan, r, [&](size_t rank, const plan::Round &round) {
      used[rank].assign(round.buffers.size(), 0);
      std::vector<uint8_t> &mask = live[rank][r];
      // Writes, then copies from last to first (a copy may feed a copy);
      // sends wait for their receives to say whether they are needed.
      for (size_t i = 0; i < round.instructions.size(); ++i) {
        const plan::Instruction &inst = round.instructions[i];
        if (inst.opcode == Opcode::Send)
          mask[i] = 0;
        if (inst.opcode != Opcode::Write)
          continue;
        mask[i] = !finishedFiles[plan.destinationTensors[inst.tensor].file];
        if (mask[i])
          used[rank][inst.buffer] = 1;
      }
      for (size_t i = round.instructions.size(); i-- > 0;) {
        const plan::Instruction &inst = round.instructions[i];
        if (inst.opcode != Opcode::Copy)
          continue;
        mask[i] = used[rank][inst.buffer];
        if (mask[i])
          used[rank][inst.input] = 1;
      }
    });
    if (plan.onlyRank) {
      // The other end of each message is another process's, which cannot
      // tell this one whether it is needed: every message is kept (with the
      // reads a send carries), so both ends always post it.
      forEachRankRound(plan, r, [&](size_t rank, const plan::Round &round) {
        for (size_t i = 0; i < round.instructions.size(); ++i) {
          const plan::Instruction &inst = round.instructions[i];
          if (inst.opcode != Opcode::Send && inst.opcode != Opcode::Recv)
            continue;
          live[rank][r][i] = 1;
          if (inst.opcode == Opcode::Send)
            for (uint32_t b : inst.buffers)
              used[rank][b] = 1;
        }
      });
    } else {
      Expected<std::vector<std::vector<SendRef>>> messages =
          matchMessages(plan, r);
      if (!messages.ok())
        return messages.error();
      // A recv is live when any buffer it brings is used; its send is live
      // with it and marks what it carries.
      forEachRankRound(plan, r, [&](size_t rank, const plan::Round &round) {
        for (size_t i = 0; i < round.instructions.size(); ++i) {
          const plan::Instruction &inst = round.instructions[i];
          if (inst.opcode != Opcode::Recv)
            continue;
          bool needed = false;
          for (uint32_t b : inst.buffers)
            needed |= used[rank][b] != 0;
          live[rank][r][i] = needed;
          if (!needed)
            continue;
          SendRef send = (*messages)[rank][i];
          live[send.rank][r][send.instruction] = 1;
          const plan::Instruction &sendInst =
              plan.programs[send.rank].rounds[r].instructions[send.instruction];
          for (uint32_t b : sendInst.buffers)
            used[send.rank][b] = 1;
        }
      });
    }
    forEachRankRound(plan, r, [&](size_t rank, const plan::Round &round) {
      for (size_t i = 0; i < round.instructions.size(); ++i) {
        const plan::Instruction &inst = round.instructions[i];
        if (inst.opcode == Opcode::Read)
          live[rank][r][i] = used[rank][inst.buffer];
      }
    });
  }
  return live;
}

} // namespace aoa::runtime
