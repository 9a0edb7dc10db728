//===- DirectTransfers.cpp ------------------------------------------------===//
#include "aoa/runtime/exec/DirectTransfers.h"

#include "aoa/runtime/storage/StoredRegion.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

namespace aoa::runtime {

namespace {

using plan::Opcode;

/// Regions whose pieces are shorter than this on average stay on the
/// buffered path: a copy_file_range call per piece costs about as much as
/// copying a few KiB. The relayout of bench/run_bench.sh, whose column
/// pieces are 6 KiB runs, takes about half the CPU time copying them file
/// to file that it takes through buffers (bench/RESULTS.md).
constexpr int64_t kMinDirectPieceBytes = 4 << 10;

/// The live uses of one buffer: how many, and the last one seen (with the
/// buffer's position in it, for a send).
struct BufferUse {
  uint32_t count = 0;
  uint32_t instruction = 0;
  uint32_t position = 0;
};

/// The live uses of every buffer of `rank`'s round.
std::vector<BufferUse> usesOf(const RankRound &rank) {
  std::vector<BufferUse> uses(rank.round().buffers.size());
  auto use = [&](uint32_t buffer, uint32_t i, uint32_t position) {
    if (buffer >= uses.size())
      return;
    BufferUse &u = uses[buffer];
    ++u.count;
    u.instruction = i;
    u.position = position;
  };
  for (uint32_t i : rank.sends()) {
    llvm::ArrayRef<uint32_t> buffers = rank.instruction(i).buffers;
    for (uint32_t b = 0; b < buffers.size(); ++b)
      use(buffers[b], i, b);
  }
  for (const std::vector<uint32_t> &level : rank.copyLevels())
    for (uint32_t i : level)
      use(rank.instruction(i).input, i, 0);
  for (uint32_t i : rank.writes())
    use(rank.instruction(i).buffer, i, 0);
  return uses;
}

/// How many runs `region` is in its stored tensor, or nullopt when it is
/// not inside the tensor (flat ranges included).
std::optional<int64_t> runsInStored(const plan::StoredTensor &tensor,
                                    const Box &region) {
  if (region.volume() == 0 ||
      !forEachStoredRun(tensor.box, tensor.flat, region,
                        [](const StoredRun &) { return false; })
           .ok())
    return std::nullopt;
  return storedRunCount(tensor.box, region);
}

/// Whether the bytes `read` fills its buffer with are, unchanged, the bytes
/// `write` stores, in pieces (where a run of one meets a run of the other)
/// that are single runs or long enough to copy one by one.
bool isDirect(const plan::Plan &plan, const RankRound &readRank,
              const plan::Instruction &read, const RankRound &writeRank,
              const plan::Instruction &write) {
  const plan::StoredTensor &source = plan.sourceTensors[read.tensor];
  const plan::StoredTensor &destination = plan.destinationTensors[write.tensor];
  if (source.dtype != destination.dtype)
    return false;
  int64_t bytes = read.region.volume() * int64_t(dtypeSize(source.dtype));
  const plan::BufferDecl &written = writeRank.round().buffers[write.buffer];
  if (write.region.volume() * int64_t(dtypeSize(destination.dtype)) != bytes ||
      readRank.bufferBytes(read.buffer) != uint64_t(bytes) ||
      written.bytes() != bytes || written.dtype != destination.dtype)
    return false;
  std::optional<int64_t> readRuns = runsInStored(source, read.region);
  std::optional<int64_t> writeRuns = runsInStored(destination, write.region);
  if (!readRuns || !writeRuns)
    return false;
  // Two tilings of the same bytes meet in at most this many pieces.
  int64_t pieces = *readRuns + *writeRuns - 1;
  return pieces == 1 || bytes / pieces >= kMinDirectPieceBytes;
}

/// (sending rank, send) -> (receiving rank, recv).
using ReceiverMap =
    std::map<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint32_t>>;

/// Appends the direct transfers whose read is on rank `p` (`rank`, the
/// live uses of its buffers `rankUses`); a read that feeds a send follows it
/// through `receiverOf` into `ranks` and their `uses` (none: no messages).
void appendDirectReads(const plan::Plan &plan, uint32_t p,
                       const RankRound &rank,
                       const std::vector<BufferUse> &rankUses,
                       const ReceiverMap &receiverOf,
                       const std::vector<RankRound> *ranks,
                       const std::vector<std::vector<BufferUse>> *uses,
                       std::vector<DirectTransfer> &out) {
  for (uint32_t i : rank.reads()) {
    const plan::Instruction &read = rank.instruction(i);
    if (read.buffer >= rankUses.size() || rankUses[read.buffer].count != 1)
      continue;
    BufferUse use = rankUses[read.buffer];
    uint32_t writeRank = p;
    const RankRound *writer = &rank;
    const plan::Instruction *consumer = &rank.instruction(use.instruction);
    if (consumer->opcode == Opcode::Send) {
      auto it = receiverOf.find({p, use.instruction});
      if (it == receiverOf.end() || !ranks || !uses)
        continue;
      auto [q, recvIndex] = it->second;
      const plan::Instruction &recv = (*ranks)[q].instruction(recvIndex);
      if (use.position >= recv.buffers.size())
        continue;
      uint32_t received = recv.buffers[use.position];
      if (received >= (*uses)[q].size() || (*uses)[q][received].count != 1)
        continue;
      writeRank = q;
      writer = &(*ranks)[q];
      use = (*uses)[q][received];
      consumer = &writer->instruction(use.instruction);
    }
    if (consumer->opcode != Opcode::Write ||
        !isDirect(plan, rank, read, *writer, *consumer))
      continue;
    out.push_back({p, i, writeRank, use.instruction});
  }
}

} // namespace

std::vector<DirectTransfer>
findDirectTransfers(const plan::Plan &plan, const std::vector<RankRound> &ranks,
                    const std::vector<std::vector<SendRef>> &messages) {
  std::vector<DirectTransfer> transfers;
  std::vector<std::vector<BufferUse>> uses(ranks.size());
  bool anyRead = false;
  for (size_t p = 0; p < ranks.size(); ++p)
    if (!ranks[p].empty()) {
      uses[p] = usesOf(ranks[p]);
      anyRead |= !ranks[p].reads().empty();
    }
  if (!anyRead)
    return transfers;
  ReceiverMap receiverOf;
  for (uint32_t q = 0; q < messages.size() && q < ranks.size(); ++q)
    for (uint32_t i = 0; i < messages[q].size(); ++i)
      if (messages[q][i].rank != SendRef::kNone)
        receiverOf[{messages[q][i].rank, messages[q][i].instruction}] = {q, i};
  for (uint32_t p = 0; p < ranks.size(); ++p)
    appendDirectReads(plan, p, ranks[p], uses[p], receiverOf, &ranks, &uses,
                      transfers);
  return transfers;
}

std::vector<DirectTransfer> directTransfersOnRank(const plan::Plan &plan,
                                                  const RankRound &round) {
  std::vector<DirectTransfer> transfers;
  if (round.reads().empty())
    return transfers;
  // Without the other ranks' rounds no message matches: only reads that
  // feed a write of this rank qualify (in time independent of the world).
  appendDirectReads(plan, round.rank(), round, usesOf(round), ReceiverMap(),
                    nullptr, nullptr, transfers);
  return transfers;
}

std::vector<uint8_t> copiedDirectly(const RankRound &round,
                                    const std::vector<DirectTransfer> &direct) {
  if (direct.empty())
    return {};
  std::vector<uint8_t> marked(round.round().instructions.size(), 0);
  for (const DirectTransfer &transfer : direct) {
    if (transfer.readRank == round.rank())
      marked[transfer.read] = 1;
    if (transfer.writeRank == round.rank())
      marked[transfer.write] = 1;
  }
  return marked;
}

std::vector<uint64_t> arenaBytesByRound(const plan::Plan &plan, uint32_t rank,
                                        ReceivedBuffers received,
                                        bool copyDirectly) {
  std::vector<uint64_t> bytes;
  if (rank >= plan.programs.size())
    return bytes;
  bytes.resize(plan.programs[rank].rounds.size());
  for (size_t r = 0; r < bytes.size(); ++r) {
    RankRound round(plan, rank, r);
    std::vector<uint8_t> direct;
    if (copyDirectly)
      direct = copiedDirectly(round, directTransfersOnRank(plan, round));
    bytes[r] = round.arenaBytes(round.buffersInArena(received, direct));
  }
  return bytes;
}

} // namespace aoa::runtime
