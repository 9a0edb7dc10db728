//===- LocalBackend.cpp ---------------------------------------------------===//
#include "aoa/runtime/backends/LocalBackend.h"

#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/exec/CallerTensors.h"
#include "aoa/runtime/exec/DirectTransfers.h"
#include "aoa/runtime/exec/MessageMatching.h"
#include "aoa/runtime/exec/RunLifeCycle.h"

#include <algorithm>

namespace aoa::runtime {

namespace {

/// One instruction of one rank in the current round.
struct Task {
  RankRound *rank;
  uint32_t instruction;
  /// A write that copies its bytes straight from the source file.
  const DirectTransfer *direct = nullptr;
};

/// One rank's destination tensors, written into the caller's memory
/// instead of files (loadRankLocally).
struct MemoryDestination {
  uint32_t rank = 0;
  std::vector<CallerTensor> tensors;
};

/// The local backend's rounds: every rank's in lock step, each rank's
/// buffers in its own arena (sized for its largest round, without the
/// buffers of reads that writes copy file to file; allocated when first
/// used); a receive borrows the sender's buffer. With a
/// MemoryDestination, only the work that one rank's tensors need runs
/// (other ranks' reads and copies included, for its messages), and its
/// writes fill the caller's memory.
class LocalRun final : public RunLifeCycle {
public:
  LocalRun(const plan::Plan &plan, const RunOptions &options,
           const RankGroup &process, ProgressMeter *progress,
           std::optional<MemoryDestination> memory = std::nullopt)
      : RunLifeCycle(plan, options, process, RankScope::AllRanks, progress,
                     JobLauncher()),
        memory_(std::move(memory)) {
    roundBytes_.resize(plan.programs.size());
    arenaBytes_.resize(plan.programs.size());
    for (uint32_t rank = 0; rank < plan.programs.size(); ++rank) {
      // Writes into memory go through the buffers.
      roundBytes_[rank] = arenaBytesByRound(
          plan, rank, ReceivedBuffers::Borrowed, options.directCopy && !memory_);
      for (uint64_t bytes : roundBytes_[rank])
        arenaBytes_[rank] = std::max(arenaBytes_[rank], bytes);
    }
  }

private:
  bool writesFiles() const override { return !memory_; }
  bool wantsFile(uint32_t file) const override {
    return !memory_ || plan_.destinationFiles[file].rank == memory_->rank;
  }
  Status checkResources() override {
    if (!memory_)
      return Status();
    Expected<std::vector<uint8_t *>> bound =
        bindCallerTensors(plan_, memory_->rank, memory_->tensors, "tensors");
    if (!bound.ok())
      return bound.error();
    tensorData_ = std::move(*bound);
    return Status();
  }
  uint64_t roundBufferBytes(uint32_t rank, size_t r) const override {
    return roundBytes_[rank][r];
  }
  uint64_t hostBufferBytes() const override {
    uint64_t bytes = 0;
    for (uint64_t rankBytes : arenaBytes_)
      bytes += rankBytes;
    return bytes;
  }
  Status allocateBuffers() override {
    arenas_.resize(plan_.programs.size());
    return Status();
  }
  void releaseBuffers() override { arenas_.clear(); }
  bool runRounds() override {
    for (size_t r = 0; r < roundCount(); ++r) {
      Status status = checkInterrupted();
      if (status.ok())
        status = runRound(r);
      if (!status.ok())
        return agree(status);
    }
    return true;
  }

  Status runRound(size_t r) {
    std::vector<RankRound> ranks;
    ranks.reserve(plan_.programs.size());
    bool anything = false;
    for (uint32_t rank = 0; rank < plan_.programs.size(); ++rank) {
      ranks.push_back(liveRound(rank, r));
      anything |= !ranks.back().empty();
    }
    if (!anything)
      return Status();
    std::vector<std::vector<SendRef>> messages;
    bool anyReceive = false;
    for (const RankRound &rank : ranks)
      anyReceive |= !rank.receives().empty();
    if (anyReceive) {
      Expected<std::vector<std::vector<SendRef>>> matches =
          matchMessages(plan_, r);
      if (!matches.ok())
        return matches.error();
      messages = std::move(*matches);
    }
    // directOf[rank][instruction]: the direct transfer a read or a write
    // belongs to, or -1. Such reads are not run; their writes copy.
    std::vector<DirectTransfer> direct;
    // File to file only: memory is written through the buffers.
    if (options_.directCopy && !memory_)
      direct = findDirectTransfers(plan_, ranks, messages);
    std::vector<std::vector<int32_t>> directOf(ranks.size());
    for (size_t t = 0; t < direct.size(); ++t) {
      for (auto [rank, i] : {std::make_pair(direct[t].readRank, direct[t].read),
                             std::make_pair(direct[t].writeRank, direct[t].write)}) {
        if (directOf[rank].empty())
          directOf[rank].assign(ranks[rank].round().instructions.size(), -1);
        directOf[rank][i] = int32_t(t);
      }
    }
    auto directIndex = [&](uint32_t rank, uint32_t i) {
      return directOf[rank].empty() ? -1 : directOf[rank][i];
    };

    std::vector<Task> reads, writes;
    std::vector<std::vector<Task>> copyLevels;
    for (RankRound &rank : ranks) {
      if (rank.empty())
        continue;
      uint32_t id = rank.rank();
      std::vector<uint8_t> inArena = rank.buffersInArena(
          ReceivedBuffers::Borrowed, copiedDirectly(rank, direct));
      if (rank.arenaBytes(inArena) > arenaBytes_[id]) // see arenaBytes_
        return Error{"internal: " + rank.where() + " needs " +
                         formatByteSize(int64_t(rank.arenaBytes(inArena))) +
                         " of buffers, more than the " +
                         formatByteSize(int64_t(arenaBytes_[id])) +
                         " allocated",
                     "please report this plan"};
      if (!arenas_[id] && arenaBytes_[id])
        arenas_[id].reset(new uint8_t[arenaBytes_[id]]);
      rank.layOutBuffers(arenas_[id].get(), inArena);
      for (uint32_t i : rank.reads()) {
        if (directIndex(id, i) < 0)
          reads.push_back({&rank, i});
        bytesRead_ += rank.bufferBytes(rank.instruction(i).buffer);
      }
      for (uint32_t i : rank.writes()) {
        int32_t t = directIndex(id, i);
        writes.push_back({&rank, i, t < 0 ? nullptr : &direct[size_t(t)]});
      }
      const auto &levels = rank.copyLevels();
      if (copyLevels.size() < levels.size())
        copyLevels.resize(levels.size());
      for (size_t level = 0; level < levels.size(); ++level)
        for (uint32_t i : levels[level])
          copyLevels[level].push_back({&rank, i});
    }

    interleaveByFile(writes);
    if (Status status = pool_->parallelFor(reads.size(), [&](size_t i) {
          return reads[i].rank->runRead(reads[i].instruction, *sources_);
        });
        !status.ok())
      return status;
    deliverMessages(ranks, messages);
    for (const std::vector<Task> &level : copyLevels)
      if (Status status = pool_->parallelFor(level.size(), [&](size_t i) {
            return level[i].rank->runCopy(level[i].instruction);
          });
          !status.ok())
        return status;
    return pool_->parallelFor(writes.size(), [&](size_t i) {
      if (writes[i].direct)
        return runDirectWrite(*writes[i].direct, ranks);
      if (memory_)
        return writeToMemory(writes[i]);
      return writes[i].rank->runWrite(writes[i].instruction, *destinations_);
    });
  }

private:
  /// Orders `writes` so that neighbours store into different files: a
  /// buffered write holds its file's lock, and the thread pool's threads
  /// take tasks in order, so writes into one file would wait for each
  /// other. Each file's writes keep their order.
  void interleaveByFile(std::vector<Task> &writes) const {
    std::vector<std::vector<Task>> byFile;
    std::vector<int32_t> slotOf(plan_.destinationFiles.size(), -1);
    for (const Task &write : writes) {
      uint32_t tensor = write.rank->instruction(write.instruction).tensor;
      uint32_t file = plan_.destinationTensors[tensor].file;
      if (slotOf[file] < 0) {
        slotOf[file] = int32_t(byFile.size());
        byFile.emplace_back();
      }
      byFile[size_t(slotOf[file])].push_back(write);
    }
    size_t count = writes.size();
    writes.clear();
    for (size_t k = 0; writes.size() < count; ++k)
      for (const std::vector<Task> &file : byFile)
        if (k < file.size())
          writes.push_back(file[k]);
  }

  /// A receive takes the sender's buffers themselves (for a direct
  /// transfer, memory nobody fills or reads).
  void deliverMessages(std::vector<RankRound> &ranks,
                       const std::vector<std::vector<SendRef>> &matches) {
    for (RankRound &rank : ranks)
      for (uint32_t i : rank.receives()) {
        const plan::Instruction &recv = rank.instruction(i);
        SendRef send = matches[rank.rank()][i];
        const RankRound &sender = ranks[send.rank];
        const plan::Instruction &sent = sender.instruction(send.instruction);
        for (size_t b = 0; b < recv.buffers.size(); ++b) {
          rank.setBuffer(recv.buffers[b], sender.buffer(sent.buffers[b]));
          bytesExchanged_ += rank.bufferBytes(recv.buffers[b]);
        }
      }
  }

  /// The write of `transfer`, its bytes copied from the source file inside
  /// the kernel.
  Status runDirectWrite(const DirectTransfer &transfer,
                        const std::vector<RankRound> &ranks) {
    return copyDirectly(ranks[transfer.readRank], transfer.read,
                        ranks[transfer.writeRank], transfer.write);
  }

  Status writeToMemory(const Task &write) {
    const plan::Instruction &inst = write.rank->instruction(write.instruction);
    if (Status status = write.rank->runWriteToMemory(
            write.instruction, tensorData_[inst.tensor]);
        !status.ok())
      return status;
    bytesWrittenToMemory_ += write.rank->bufferBytes(inst.buffer);
    return Status();
  }

  std::optional<MemoryDestination> memory_;
  /// With memory_: by destination tensor, the caller's memory.
  std::vector<uint8_t *> tensorData_;
  /// By rank and round: the arena the round needs (arenaBytesByRound: no
  /// live round needs more).
  std::vector<std::vector<uint64_t>> roundBytes_;
  /// By rank: its largest round's arena, and the arena once allocated.
  std::vector<uint64_t> arenaBytes_;
  std::vector<std::unique_ptr<uint8_t[]>> arenas_;
};

Expected<RunReport> reportOf(RankRunResult result) {
  if (result.ok())
    return result.report;
  // A group of one fails only with its own error.
  return result.error ? *result.error
                      : Error{"the run failed", "see the messages above"};
}

} // namespace

Expected<RunReport> loadRankLocally(const plan::Plan &plan,
                                    const RunOptions &options, uint32_t rank,
                                    std::vector<CallerTensor> tensors) {
  if (rank >= plan.ranks)
    return Error{"rank " + std::to_string(rank) + " is not a rank of the plan",
                 "the plan has " + std::to_string(plan.ranks) +
                     (plan.ranks == 1 ? " rank (0)" : " ranks (0 to " +
                     std::to_string(plan.ranks - 1) + ")")};
  std::unique_ptr<RankGroup> process = makeSingleRankGroup();
  return reportOf(LocalRun(plan, options, *process, nullptr,
                           MemoryDestination{rank, std::move(tensors)})
                      .run());
}

Expected<RunReport> runPlanLocally(const plan::Plan &plan,
                                   const RunOptions &options,
                                   ProgressMeter *progress) {
  std::unique_ptr<RankGroup> process = makeSingleRankGroup();
  return reportOf(LocalRun(plan, options, *process, progress).run());
}

} // namespace aoa::runtime
