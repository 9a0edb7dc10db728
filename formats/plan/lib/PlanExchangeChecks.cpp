//===- PlanExchangeChecks.cpp - Sends, receives and their pairing ---------===//
//
// A send or recv names an existing peer other than itself and moves buffers
// (a send only those its round has read); across ranks, each send of a
// round is paired with a recv of the peer (MessagePairing.h) and both move
// the same buffer types, in order.
//
//===----------------------------------------------------------------------===//
#include "PlanChecker.h"

#include "PlanTextSyntax.h"
#include "TransformTypes.h"

#include "aoa/formats/plan/MessagePairing.h"

#include <algorithm>
#include <map>

namespace aoa {
namespace plancheck {

using plan::Opcode;

void PlanChecker::checkExchangeInstruction(uint32_t r, uint32_t k, uint32_t i,
                                           const plan::Round &round) {
  const plan::Instruction &in = round.instructions[i];
  bool send = in.opcode == Opcode::Send;
  if (in.peer >= plan_.ranks)
    error(at(r, k, i, Field::Peer), "rank " + std::to_string(in.peer) +
                                        " does not exist: the plan has " +
                                        plural(plan_.ranks, "rank"))
        .hint("ranks count from 0 to ranks - 1");
  else if (in.peer == r)
    error(at(r, k, i, Field::Peer),
          std::string("rank ") + std::to_string(r) +
              (send ? " sends to itself" : " receives from itself"))
        .hint("a rank uses its own buffers directly; drop the send and the "
              "recv");
  if (in.buffers.empty()) {
    error(at(r, k, i),
          std::string(send ? "send" : "recv") + " moves no buffers")
        .hint("list the buffers packed into the message");
    return;
  }
  if (!send)
    return; // its buffers are definitions, checked above
  for (uint32_t j = 0; j < in.buffers.size(); ++j) {
    uint32_t id = in.buffers[j];
    if (!usable(r, k, i, id, at(r, k, i, Field::Operand, j)))
      continue;
    const plan::Instruction &def = round.instructions[definer_[id]];
    if (def.opcode != Opcode::Read) {
      auto diag = error(at(r, k, i, Field::Operand, j),
                        "buffer %" + std::to_string(id) + " comes from '" +
                            std::string(plantext::opcodeName(def.opcode)) +
                            "'; a round sends only buffers it has read");
      note(diag, at(r, k, definer_[id], Field::Result, resultItem(def, id)),
           "defined here");
      diag.hint("forward received data in a later round, after reading "
                "nothing new: sends and receives of a round are posted "
                "together");
    }
  }
}

/// Within round k, the j-th recv on rank b from rank a takes the j-th send
/// of rank a to rank b (MessagePairing.h); both must move the same buffer
/// types in order. Unmatched sends are reported before unmatched recvs.
void PlanChecker::checkExchanges(uint32_t k) {
  std::map<std::pair<uint32_t, uint32_t>, plan::LinkMessages> links =
      plan::roundMessages(plan_, k);
  for (const auto &[link, messages] : links) {
    size_t pairs = std::min(messages.sends.size(), messages.recvs.size());
    for (size_t j = 0; j < pairs && !errors_.stopped(); ++j)
      compareMessage(k, link.first, messages.sends[j], link.second,
                     messages.recvs[j]);
    reportUnmatched(k, true, link, messages.sends, messages.recvs.size());
  }
  for (const auto &[link, messages] : links)
    reportUnmatched(k, false, link, messages.recvs, messages.sends.size());
}

/// The sends (or recvs) `list` of `link` = (from, to) in round k beyond the
/// `matched` ones that the other side posts.
void PlanChecker::reportUnmatched(uint32_t k, bool send,
                                  std::pair<uint32_t, uint32_t> link,
                                  const std::vector<uint32_t> &list,
                                  size_t matched) {
  std::string self = std::to_string(send ? link.first : link.second);
  uint32_t peer = send ? link.second : link.first;
  std::string other = std::to_string(peer);
  for (size_t j = matched; j < list.size() && !errors_.stopped(); ++j) {
    auto diag =
        error(at(send ? link.first : link.second, k, list[j]),
              std::string(send ? "send to" : "recv from") + " rank " + other +
                  " has no matching " + (send ? "recv" : "send") + ": rank " +
                  other + (send ? " receives " : " sends ") +
                  plural(matched, "message") + (send ? " from" : " to") +
                  " rank " + self + " in round " + std::to_string(k));
    note(diag, roundSite(peer, k),
         "rank " + other + "'s round " + std::to_string(k) + " is here");
    diag.hint(std::string("every ") +
              (send ? "send needs a recv of the same buffers on"
                    : "recv needs a send of the same buffers from") +
              " the peer in the same round, or the round deadlocks");
  }
}

/// The types of an exchange instruction's buffers, or nullopt when one
/// is not declared (reported above).
std::optional<std::string> PlanChecker::messageTypes(uint32_t r, uint32_t k,
                                                     uint32_t i) const {
  const plan::Round &round = plan_.programs[r].rounds[k];
  std::string out;
  for (uint32_t id : round.instructions[i].buffers) {
    if (id >= round.buffers.size())
      return std::nullopt;
    out += (out.empty() ? "" : ", ") + typeText(round.buffers[id]);
  }
  return out;
}

void PlanChecker::compareMessage(uint32_t k, uint32_t from, uint32_t sendIndex,
                                 uint32_t to, uint32_t recvIndex) {
  // Most messages match: compared field by field first, their types are
  // formatted only to tell how they differ (millions of messages in a
  // large plan).
  const plan::Round &sendRound = plan_.programs[from].rounds[k];
  const plan::Round &recvRound = plan_.programs[to].rounds[k];
  llvm::ArrayRef<uint32_t> sentIds = sendRound.instructions[sendIndex].buffers;
  llvm::ArrayRef<uint32_t> receivedIds =
      recvRound.instructions[recvIndex].buffers;
  auto sameType = [&](uint32_t s, uint32_t r) {
    return s < sendRound.buffers.size() && r < recvRound.buffers.size() &&
           sendRound.buffers[s].dtype == recvRound.buffers[r].dtype &&
           sendRound.buffers[s].shape == recvRound.buffers[r].shape;
  };
  if (sentIds.size() == receivedIds.size() &&
      std::equal(sentIds.begin(), sentIds.end(), receivedIds.begin(), sameType))
    return;
  std::optional<std::string> sent = messageTypes(from, k, sendIndex);
  std::optional<std::string> received = messageTypes(to, k, recvIndex);
  if (!sent || !received || *sent == *received)
    return;
  auto diag = error(at(to, k, recvIndex),
                    "recv from rank " + std::to_string(from) + " expects " +
                        *received + ", but the matching send of rank " +
                        std::to_string(from) + " sends " + *sent);
  note(diag, at(from, k, sendIndex), "the matching send");
  diag.hint("the n-th recv from a peer in a round takes the n-th send of "
            "that peer to this rank in the round; their buffers must have "
            "the same dtypes and shapes, in order");
}

} // namespace plancheck
} // namespace aoa
