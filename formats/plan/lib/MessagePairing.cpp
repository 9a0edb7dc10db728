//===- MessagePairing.cpp -------------------------------------------------===//
#include "aoa/formats/plan/MessagePairing.h"

#include "BinaryLayout.h"
#include "ByteCoding.h"

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

namespace {

/// The hash of the j-th message of link (from, to) in round `round` moving
/// `instruction`'s buffers, as both of its ends compute it.
uint64_t messageHash(const Round &round, const Instruction &instruction,
                     size_t roundIndex, uint32_t from, uint32_t to,
                     uint32_t j) {
  binplan::ByteWriter bytes;
  bytes.u64(roundIndex);
  bytes.u32(from);
  bytes.u32(to);
  bytes.u32(j);
  for (uint32_t id : instruction.buffers) {
    if (id >= round.buffers.size()) {
      bytes.u32(UINT32_MAX); // an undeclared buffer never matches
      continue;
    }
    const BufferDecl &buffer = round.buffers[id];
    bytes.u32(uint32_t(buffer.dtype));
    bytes.u32(uint32_t(buffer.shape.size()));
    for (int64_t extent : buffer.shape)
      bytes.i64(extent);
  }
  std::string_view data = bytes.bytes();
  return binplan::checksum(data.data(), data.size());
}

} // namespace

ExchangeSignature exchangeSignature(const Plan &plan, uint32_t rank) {
  ExchangeSignature signature;
  if (rank >= plan.programs.size())
    return signature;
  const std::vector<Round> &rounds = plan.programs[rank].rounds;
  for (size_t r = 0; r < rounds.size(); ++r) {
    // The j-th send to (recv from) each peer in this round.
    std::map<uint32_t, uint32_t> sentTo, receivedFrom;
    for (const Instruction &in : rounds[r].instructions) {
      if (in.peer == rank || in.buffers.empty())
        continue;
      if (in.opcode == Opcode::Send)
        signature.sends += messageHash(rounds[r], in, r, rank, in.peer,
                                       sentTo[in.peer]++);
      else if (in.opcode == Opcode::Recv)
        signature.recvs += messageHash(rounds[r], in, r, in.peer, rank,
                                       receivedFrom[in.peer]++);
    }
  }
  return signature;
}

} // namespace aoa::plan
