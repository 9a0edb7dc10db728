//===- MpiExchange.cpp - A round's messages over MPI ----------------------===//
#include "aoa/runtime/backends/MpiBackend.h"

#include "MpiHandles.h"
#include "aoa/runtime/exec/RankRound.h"
#include "aoa/runtime/support/FaultInjection.h"
#include "aoa/runtime/support/Messages.h"

#include <algorithm>
#include <vector>

namespace aoa::runtime {

namespace {

/// MPI tags are at least 15 bits; rounds are separated by agreements, so
/// the tag only helps a reader of a trace.
constexpr uint32_t kTagModulus = 32768;

} // namespace

Status exchangeWithMpi(const MpiSession &session, const RankRound &round,
                       llvm::function_ref<uint8_t *(uint32_t)> address,
                       uint64_t &received) {
  if (round.sends().empty() && round.receives().empty())
    return Status();
  MPI_Comm world = session.handles().world;
  int tag = int(round.roundNumber() % kTagModulus);
  std::vector<MPI_Request> requests;
  std::vector<MPI_Datatype> types;
  Status failure;
  // A message is its buffers back to back: one derived datatype over the
  // buffers' addresses sends (or receives) them in place.
  auto post = [&](uint32_t i, bool send) {
    const plan::Instruction &inst = round.instruction(i);
    std::vector<int> lengths;
    std::vector<MPI_Aint> addresses;
    uint64_t messageBytes = 0;
    for (uint32_t b : inst.buffers) {
      uint8_t *data = address(b);
      uint64_t bytes = round.bufferBytes(b);
      messageBytes += bytes;
      for (uint64_t offset = 0; offset < bytes; offset += kMpiChunkElements) {
        MPI_Aint at;
        MPI_Get_address(data + offset, &at);
        addresses.push_back(at);
        lengths.push_back(
            int(std::min<uint64_t>(kMpiChunkElements, bytes - offset)));
      }
    }
    MPI_Datatype type;
    MPI_Type_create_hindexed(int(lengths.size()), lengths.data(),
                             addresses.data(), MPI_BYTE, &type);
    MPI_Type_commit(&type);
    if (injectedFault(FaultPoint::Message) && failure.ok())
      failure =
          Error{"round " + std::to_string(round.roundNumber()) + ": " +
                    (send ? "sending " : "receiving ") + "a message of " +
                    std::to_string(messageBytes) + " bytes " +
                    (send ? "to" : "from") + " rank " +
                    std::to_string(inst.peer) + " failed: " + errnoText(errno),
                "MPI reported the failure; check the network, then "
                "run the same command again: it resumes from the "
                "files every rank finished"};
    else if (!send)
      received += messageBytes;
    types.push_back(type);
    requests.emplace_back();
    if (send)
      MPI_Isend(MPI_BOTTOM, 1, type, int(inst.peer), tag, world,
                &requests.back());
    else
      MPI_Irecv(MPI_BOTTOM, 1, type, int(inst.peer), tag, world,
                &requests.back());
  };
  // Sends and receives to one peer pair up in program order (MPI does not
  // let messages of one sender and tag overtake each other).
  for (uint32_t i : round.receives())
    post(i, false);
  for (uint32_t i : round.sends())
    post(i, true);
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (MPI_Datatype &type : types)
    MPI_Type_free(&type);
  return failure;
}

} // namespace aoa::runtime

