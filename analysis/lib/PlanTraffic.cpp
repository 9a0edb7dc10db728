//===- PlanTraffic.cpp - The bytes a plan moves ---------------------------===//
//
// One pass over every rank's rounds. Sends are counted on the sender (the
// matrix and the messages) and receives on the receiver; a verified plan
// pairs them, so both sides agree.
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/PlanTraffic.h"

#include <algorithm>

namespace aoa {
namespace analysis {

void RankTraffic::add(const RankTraffic &other) {
  read += other.read;
  sent += other.sent;
  received += other.received;
  written += other.written;
  copied += other.copied;
  bufferBytes = std::max(bufferBytes, other.bufferBytes);
}

namespace {

/// The bytes of the buffers a send or receive packs into its message.
int64_t messageBytes(const plan::Round &round, const plan::Instruction &in) {
  int64_t bytes = 0;
  for (uint32_t buffer : in.buffers)
    bytes += round.buffers[buffer].bytes();
  return bytes;
}

RankTraffic roundTraffic(const plan::Round &round, uint32_t rank,
                         std::vector<Message> &messages) {
  RankTraffic traffic;
  traffic.bufferBytes = round.bufferBytes();
  for (const plan::Instruction &in : round.instructions) {
    switch (in.opcode) {
    case plan::Opcode::Read:
      traffic.read += round.buffers[in.buffer].bytes();
      break;
    case plan::Opcode::Send: {
      int64_t bytes = messageBytes(round, in);
      traffic.sent += bytes;
      messages.push_back(Message{rank, in.peer, bytes});
      break;
    }
    case plan::Opcode::Recv:
      traffic.received += messageBytes(round, in);
      break;
    case plan::Opcode::Copy:
      traffic.copied += round.buffers[in.buffer].bytes();
      break;
    case plan::Opcode::Write:
      traffic.written += round.buffers[in.buffer].bytes();
      break;
    }
  }
  return traffic;
}

} // namespace

PlanTraffic computePlanTraffic(const plan::Plan &plan) {
  PlanTraffic out;
  out.ranks = plan.ranks;
  out.sharedSource = plan.sourceAccess == plan::SourceAccess::Shared;
  out.rankTotals.resize(plan.ranks);
  size_t rounds = 0;
  for (const plan::RankProgram &program : plan.programs)
    rounds = std::max(rounds, program.rounds.size());
  out.rounds.resize(rounds);
  for (uint32_t rank = 0; rank < plan.programs.size() && rank < plan.ranks;
       ++rank) {
    const std::vector<plan::Round> &programRounds = plan.programs[rank].rounds;
    for (size_t r = 0; r < programRounds.size(); ++r) {
      const plan::Round &round = programRounds[r];
      if (round.instructions.empty())
        continue;
      RoundTraffic &roundOut = out.rounds[r];
      RankTraffic traffic = roundTraffic(round, rank, roundOut.messages);
      roundOut.ranks.push_back(RankRoundTraffic{rank, traffic});
      out.rankTotals[rank].add(traffic);
      out.total.add(traffic);
    }
  }
  for (const RoundTraffic &round : out.rounds)
    for (const Message &message : round.messages)
      out.sent[{message.from, message.to}] += message.bytes;
  return out;
}

TrafficMatrix groupMatrix(const TrafficMatrix &matrix, uint32_t ranksPerGroup) {
  if (ranksPerGroup <= 1)
    return matrix;
  TrafficMatrix grouped;
  for (const auto &[pair, bytes] : matrix)
    grouped[{pair.first / ranksPerGroup, pair.second / ranksPerGroup}] += bytes;
  return grouped;
}

} // namespace analysis
} // namespace aoa
