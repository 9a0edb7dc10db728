//===- LocalExecutor.cpp --------------------------------------------------===//
#include "aoa/runtime/exec/LocalExecutor.h"

#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/exec/DirectTransfers.h"
#include "aoa/runtime/exec/LiveInstructions.h"
#include "aoa/runtime/exec/MessageMatching.h"
#include "aoa/runtime/exec/ProgressMeter.h"
#include "aoa/runtime/exec/RankRound.h"
#include "aoa/runtime/storage/DestinationFiles.h"
#include "aoa/runtime/storage/SourceFiles.h"
#include "aoa/runtime/support/ThreadPool.h"

#include <atomic>
#include <chrono>
#include <unistd.h>

namespace aoa::runtime {

namespace {

using plan::Opcode;

/// One instruction of one rank in the current round.
struct Task {
  RankRound *rank;
  uint32_t instruction;
  /// A write that copies its bytes straight from the source file.
  const DirectTransfer *direct = nullptr;
};

Error prefixed(const std::string &where, const Error &error) {
  return Error{where + ": " + error.message, error.hint};
}

class LocalRun {
public:
  LocalRun(const plan::Plan &plan, ThreadPool &pool,
           const SourceFiles &sources, DestinationFiles &destinations,
           const InstructionMask &live, bool directCopy, RunReport &report)
      : plan_(plan), pool_(pool), sources_(sources),
        destinations_(destinations), live_(live), directCopy_(directCopy),
        report_(report) {}

  /// Sizes each rank's arena for its largest round (allocated when first
  /// used).
  void reserveArenas(std::vector<uint64_t> bytes) {
    arenas_.resize(plan_.programs.size());
    arenaBytes_ = std::move(bytes);
  }

  Status runRound(size_t r) {
    std::vector<RankRound> ranks;
    ranks.reserve(plan_.programs.size());
    bool anything = false;
    for (uint32_t rank = 0; rank < plan_.programs.size(); ++rank) {
      llvm::ArrayRef<uint8_t> live;
      if (r < live_[rank].size())
        live = live_[rank][r];
      ranks.emplace_back(plan_, rank, r, live);
      anything |= !ranks.back().empty();
    }
    if (!anything)
      return Status();
    ++report_.roundsRun;
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
    if (directCopy_)
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
      if (!arenas_[id] && arenaBytes_[id])
        arenas_[id].reset(new uint8_t[arenaBytes_[id]]);
      rank.layOutBuffers(arenas_[id].get(), ReceivedBuffers::Borrowed);
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

    if (Status status = pool_.parallelFor(reads.size(), [&](size_t i) {
          return reads[i].rank->runRead(reads[i].instruction, sources_);
        });
        !status.ok())
      return status;
    deliverMessages(ranks, messages);
    for (const std::vector<Task> &level : copyLevels)
      if (Status status = pool_.parallelFor(level.size(), [&](size_t i) {
            return level[i].rank->runCopy(level[i].instruction);
          });
          !status.ok())
        return status;
    return pool_.parallelFor(writes.size(), [&](size_t i) {
      if (writes[i].direct)
        return runDirectWrite(*writes[i].direct, ranks);
      return writes[i].rank->runWrite(writes[i].instruction, destinations_);
    });
  }

  uint64_t bytesRead() const { return bytesRead_; }
  uint64_t bytesCopiedDirectly() const { return bytesCopiedDirectly_; }

private:
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
          report_.bytesExchanged += rank.bufferBytes(recv.buffers[b]);
        }
      }
  }

  /// The write of `transfer`, its bytes copied from the source file inside
  /// the kernel; hashed afterwards by reading the staged file back.
  Status runDirectWrite(const DirectTransfer &transfer,
                        const std::vector<RankRound> &ranks) {
    const RankRound &reader = ranks[transfer.readRank];
    const RankRound &writer = ranks[transfer.writeRank];
    const plan::Instruction &read = reader.instruction(transfer.read);
    const plan::Instruction &write = writer.instruction(transfer.write);
    Expected<SourceRun> run = sources_.locateRun(read.tensor, read.region);
    if (!run.ok())
      return prefixed(reader.where(), run.error());
    // Without the source's bytes in memory the tensor is hashed by reading
    // the staged file back (source files are not mapped: SourceFiles.h).
    Status status = destinations_.writeRegionFromFile(
        write.tensor, write.region, run->fd, run->fileOffset, nullptr);
    if (!status.ok())
      return prefixed(writer.where(), status.error());
    bytesCopiedDirectly_ += run->size;
    return Status();
  }

  const plan::Plan &plan_;
  ThreadPool &pool_;
  const SourceFiles &sources_;
  DestinationFiles &destinations_;
  const InstructionMask &live_;
  bool directCopy_;
  RunReport &report_;
  std::vector<std::unique_ptr<uint8_t[]>> arenas_;
  std::vector<uint64_t> arenaBytes_;
  uint64_t bytesRead_ = 0;
  std::atomic<uint64_t> bytesCopiedDirectly_{0};
};

} // namespace

Expected<RunReport> runPlanLocally(const plan::Plan &plan,
                                   const RunOptions &options,
                                   ProgressMeter *progress) {
  auto started = std::chrono::steady_clock::now();
  RunReport report;
  report.ranks = plan.ranks;
  if (plan.programs.size() != plan.ranks)
    return Error{"the plan has " + std::to_string(plan.programs.size()) +
                     " rank programs for " + std::to_string(plan.ranks) +
                     " ranks",
                 "the plan is inconsistent; recompile it"};

  // Memory first: a plan this machine cannot hold fails before anything
  // is created.
  std::vector<uint64_t> arenaBytes(plan.programs.size());
  for (uint32_t rank = 0; rank < plan.programs.size(); ++rank)
    arenaBytes[rank] =
        largestRoundArenaBytes(plan, rank, ReceivedBuffers::Borrowed);
  for (uint64_t bytes : arenaBytes)
    report.peakBufferBytes += bytes;
  uint64_t limit = memoryLimitOf(options);
  if (limit && report.peakBufferBytes > limit)
    return Error{"running all " + std::to_string(plan.ranks) +
                     " ranks in one process needs " +
                     formatByteSize(int64_t(report.peakBufferBytes)) +
                     " of buffers at once (each rank's largest round), more "
                     "than the limit of " +
                     formatByteSize(int64_t(limit)),
                 "recompile the plan with a smaller --memory-budget (the "
                 "local backend holds every rank's buffers), or raise "
                 "--memory-limit"};

  ThreadPool pool(options.threads ? options.threads : defaultThreadCount());
  DestinationOptions destinationOptions;
  destinationOptions.overwrite = options.overwrite;
  destinationOptions.restart = options.restart;
  destinationOptions.planFingerprint = options.planFingerprint;
  destinationOptions.stopAfterFiles = options.stopAfterFiles;
  Expected<std::unique_ptr<DestinationFiles>> destinations =
      DestinationFiles::open(plan, options.destinationDirectory,
                             options.sourceDirectory, destinationOptions);
  if (!destinations.ok())
    return destinations.error();
  DestinationFiles &dst = **destinations;
  report.filesResumed = uint32_t(dst.resumedFileCount());

  auto fail = [&](const Error &error) -> Expected<RunReport> {
    dst.cleanUpAfterFailure();
    return error;
  };
  Expected<InstructionMask> live = liveInstructions(plan, dst.finishedFiles());
  if (!live.ok())
    return fail(live.error());
  std::vector<bool> neededSources(plan.sourceFiles.size(), false);
  for (size_t rank = 0; rank < plan.programs.size(); ++rank)
    for (size_t r = 0; r < plan.programs[rank].rounds.size(); ++r) {
      const plan::Round &round = plan.programs[rank].rounds[r];
      for (size_t i = 0; i < round.instructions.size(); ++i)
        if ((*live)[rank][r][i] &&
            round.instructions[i].opcode == Opcode::Read)
          neededSources[plan.sourceTensors[round.instructions[i].tensor].file] =
              true;
    }
  Expected<SourceFiles> sources =
      SourceFiles::open(plan, options.sourceDirectory, neededSources, pool);
  if (!sources.ok())
    return fail(sources.error());

  LocalRun run(plan, pool, *sources, dst, *live, options.directCopy, report);
  run.reserveArenas(std::move(arenaBytes));
  if (Status status = dst.finishEmptyFiles(); !status.ok())
    return fail(status.error());
  if (progress)
    progress->start("aoa-run", dst.bytesToWrite(), dst.bytesWritten());
  size_t rounds = 0;
  for (const plan::RankProgram &program : plan.programs)
    rounds = std::max(rounds, program.rounds.size());
  for (size_t r = 0; r < rounds; ++r) {
    Status status = run.runRound(r);
    if (!status.ok()) {
      if (progress)
        progress->stop();
      return fail(status.error());
    }
  }
  if (progress)
    progress->stop();
  report.bytesRead = run.bytesRead();
  report.bytesCopiedDirectly = run.bytesCopiedDirectly();
  report.bytesWritten = dst.bytesWritten();
  report.filesWritten =
      uint32_t(plan.destinationFiles.size()) - report.filesResumed;
  if (Status installed = dst.install(); !installed.ok())
    return fail(installed.error());
  if (options.verify) {
    if (Status verified = dst.verify(pool); !verified.ok())
      return verified.error();
    report.verified = true;
  }
  report.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
  return report;
}

} // namespace aoa::runtime
