//===- LocalExecutor.cpp --------------------------------------------------===//
#include "aoa/runtime/LocalExecutor.h"

#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/DestinationFiles.h"
#include "aoa/runtime/LiveInstructions.h"
#include "aoa/runtime/MessageMatching.h"
#include "aoa/runtime/ProgressMeter.h"
#include "aoa/runtime/SourceFiles.h"
#include "aoa/runtime/ThreadPool.h"
#include "aoa/runtime/TransformSteps.h"
#include "aoa/runtime/WriteCoverage.h"

#include <chrono>
#include <unistd.h>

namespace aoa::runtime {

namespace {

using plan::Opcode;

/// Buffers start on cache-line boundaries.
constexpr uint64_t kBufferAlignment = 64;

uint64_t alignUp(uint64_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

/// Which buffers of a round a recv defines: those are the sender's memory.
std::vector<uint8_t> receivedBuffers(const plan::Round &round) {
  std::vector<uint8_t> received(round.buffers.size(), 0);
  for (const plan::Instruction &inst : round.instructions)
    if (inst.opcode == Opcode::Recv)
      for (uint32_t b : inst.buffers)
        received[b] = 1;
  return received;
}

/// The memory a rank's round needs of its own.
uint64_t ownedBytes(const plan::Round &round) {
  std::vector<uint8_t> received = receivedBuffers(round);
  uint64_t bytes = 0;
  for (size_t b = 0; b < round.buffers.size(); ++b)
    if (!received[b])
      bytes += alignUp(uint64_t(round.buffers[b].bytes()));
  return bytes;
}

uint64_t physicalMemory() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long pageSize = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

/// Each rank's largest round, in own buffer bytes.
std::vector<uint64_t> largestRounds(const plan::Plan &plan) {
  std::vector<uint64_t> largest(plan.programs.size(), 0);
  for (size_t rank = 0; rank < plan.programs.size(); ++rank)
    for (const plan::Round &round : plan.programs[rank].rounds)
      largest[rank] = std::max(largest[rank], ownedBytes(round));
  return largest;
}

std::string where(uint32_t rank, size_t round) {
  return "rank " + std::to_string(rank) + ", round " + std::to_string(round);
}

/// One instruction of one rank in the current round.
struct Task {
  uint32_t rank;
  uint32_t instruction;
};

class LocalRun {
public:
  LocalRun(const plan::Plan &plan, ThreadPool &pool,
           const SourceFiles &sources, DestinationFiles &destinations,
           const InstructionMask &live, RunReport &report)
      : plan_(plan), pool_(pool), sources_(sources),
        destinations_(destinations), live_(live), report_(report) {}

  /// Sizes each rank's arena for its largest round (allocated when first
  /// used).
  void reserveArenas(std::vector<uint64_t> bytes) {
    arenas_.resize(plan_.programs.size());
    pointers_.resize(plan_.programs.size());
    arenaBytes_ = std::move(bytes);
  }

  Status runRound(size_t r) {
    std::vector<Task> reads, copies, writes, receives;
    for (uint32_t rank = 0; rank < plan_.programs.size(); ++rank) {
      if (r >= plan_.programs[rank].rounds.size())
        continue;
      const plan::Round &round = plan_.programs[rank].rounds[r];
      for (uint32_t i = 0; i < round.instructions.size(); ++i) {
        if (!live_[rank][r][i])
          continue;
        switch (round.instructions[i].opcode) {
        case Opcode::Read:
          reads.push_back({rank, i});
          break;
        case Opcode::Recv:
          receives.push_back({rank, i});
          break;
        case Opcode::Copy:
          copies.push_back({rank, i});
          break;
        case Opcode::Write:
          writes.push_back({rank, i});
          break;
        case Opcode::Send:
          break;
        }
      }
    }
    if (reads.empty() && copies.empty() && writes.empty() && receives.empty())
      return Status();
    ++report_.roundsRun;
    layOutBuffers(r);

    if (Status status = pool_.parallelFor(
            reads.size(), [&](size_t i) { return runRead(r, reads[i]); });
        !status.ok())
      return status;
    if (Status status = deliverMessages(r, receives); !status.ok())
      return status;
    if (Status status = runCopies(r, copies); !status.ok())
      return status;
    return pool_.parallelFor(writes.size(),
                             [&](size_t i) { return runWrite(r, writes[i]); });
  }

private:
  const plan::Instruction &instructionOf(size_t r, const Task &task) const {
    return plan_.programs[task.rank].rounds[r].instructions[task.instruction];
  }
  const plan::BufferDecl &bufferOf(uint32_t rank, size_t r,
                                   uint32_t buffer) const {
    return plan_.programs[rank].rounds[r].buffers[buffer];
  }

  /// Points each rank's own buffers into its arena.
  void layOutBuffers(size_t r) {
    for (uint32_t rank = 0; rank < plan_.programs.size(); ++rank) {
      std::vector<uint8_t *> &pointers = pointers_[rank];
      pointers.clear();
      if (r >= plan_.programs[rank].rounds.size())
        continue;
      const plan::Round &round = plan_.programs[rank].rounds[r];
      if (!arenas_[rank] && arenaBytes_[rank])
        arenas_[rank].reset(new uint8_t[arenaBytes_[rank]]);
      std::vector<uint8_t> received = receivedBuffers(round);
      pointers.assign(round.buffers.size(), nullptr);
      uint64_t offset = 0;
      for (size_t b = 0; b < round.buffers.size(); ++b) {
        if (received[b])
          continue;
        pointers[b] = arenas_[rank].get() + offset;
        offset += alignUp(uint64_t(round.buffers[b].bytes()));
      }
    }
  }

  Status runRead(size_t r, const Task &task) {
    const plan::Instruction &inst = instructionOf(r, task);
    const plan::BufferDecl &buffer = bufferOf(task.rank, r, inst.buffer);
    Status status =
        sources_.readRegion(inst.tensor, inst.region,
                            pointers_[task.rank][inst.buffer],
                            size_t(buffer.bytes()));
    if (!status.ok())
      return Error{where(task.rank, r) + ": " + status.error().message,
                   status.error().hint};
    bytesRead_ += uint64_t(buffer.bytes());
    return Status();
  }

  /// A receive takes the sender's buffers themselves.
  Status deliverMessages(size_t r, const std::vector<Task> &receives) {
    if (receives.empty())
      return Status();
    Expected<std::vector<std::vector<SendRef>>> matches =
        matchMessages(plan_, r);
    if (!matches.ok())
      return matches.error();
    for (const Task &task : receives) {
      const plan::Instruction &recv = instructionOf(r, task);
      SendRef send = (*matches)[task.rank][task.instruction];
      const plan::Instruction &sent =
          plan_.programs[send.rank].rounds[r].instructions[send.instruction];
      for (size_t b = 0; b < recv.buffers.size(); ++b) {
        pointers_[task.rank][recv.buffers[b]] =
            pointers_[send.rank][sent.buffers[b]];
        report_.bytesExchanged +=
            uint64_t(bufferOf(task.rank, r, recv.buffers[b]).bytes());
      }
    }
    return Status();
  }

  /// Copies whose input another copy of the round produces run after it.
  Status runCopies(size_t r, const std::vector<Task> &copies) {
    std::vector<std::vector<Task>> levels;
    std::vector<std::vector<int>> levelOfBuffer(plan_.programs.size());
    for (const Task &task : copies) {
      std::vector<int> &levelOf = levelOfBuffer[task.rank];
      if (levelOf.empty())
        levelOf.assign(plan_.programs[task.rank].rounds[r].buffers.size(), -1);
      const plan::Instruction &inst = instructionOf(r, task);
      int level = levelOf[inst.input] + 1;
      levelOf[inst.buffer] = level;
      if (levels.size() <= size_t(level))
        levels.resize(size_t(level) + 1);
      levels[size_t(level)].push_back(task);
    }
    for (const std::vector<Task> &level : levels) {
      Status status = pool_.parallelFor(level.size(), [&](size_t i) {
        return runCopy(r, level[i]);
      });
      if (!status.ok())
        return status;
    }
    return Status();
  }

  Status runCopy(size_t r, const Task &task) {
    const plan::Instruction &inst = instructionOf(r, task);
    const plan::BufferDecl &in = bufferOf(task.rank, r, inst.input);
    const plan::BufferDecl &out = bufferOf(task.rank, r, inst.buffer);
    Status status = applyTransformSteps(
        inst.transform,
        TensorView(pointers_[task.rank][inst.input], size_t(in.bytes()),
                   in.dtype, in.shape),
        MutableTensorView(pointers_[task.rank][inst.buffer],
                          size_t(out.bytes()), out.dtype, out.shape));
    if (!status.ok())
      return Error{where(task.rank, r) + ": " + status.error().message,
                   status.error().hint};
    return Status();
  }

  Status runWrite(size_t r, const Task &task) {
    const plan::Instruction &inst = instructionOf(r, task);
    const plan::BufferDecl &buffer = bufferOf(task.rank, r, inst.buffer);
    const plan::StoredTensor &tensor = plan_.destinationTensors[inst.tensor];
    if (buffer.dtype != tensor.dtype ||
        buffer.bytes() !=
            inst.region.volume() * int64_t(dtypeSize(tensor.dtype)))
      return Error{where(task.rank, r) + ": writing " + tensor.key +
                       inst.region.toString() + " from a buffer of " +
                       std::string(dtypeName(buffer.dtype)) +
                       formatShape(buffer.shape) + " into " +
                       std::string(dtypeName(tensor.dtype)) + " data",
                   "the plan is inconsistent; recompile it"};
    Status status = destinations_.writeRegion(
        inst.tensor, inst.region, pointers_[task.rank][inst.buffer]);
    if (!status.ok())
      return Error{where(task.rank, r) + ": " + status.error().message,
                   status.error().hint};
    return Status();
  }

public:
  uint64_t bytesRead() const { return bytesRead_; }

private:
  const plan::Plan &plan_;
  ThreadPool &pool_;
  const SourceFiles &sources_;
  DestinationFiles &destinations_;
  const InstructionMask &live_;
  RunReport &report_;
  std::vector<std::unique_ptr<uint8_t[]>> arenas_;
  std::vector<uint64_t> arenaBytes_;
  std::vector<std::vector<uint8_t *>> pointers_;
  std::atomic<uint64_t> bytesRead_{0};
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
  if (Status covered = checkWriteCoverage(plan); !covered.ok())
    return covered.error();

  // Memory first: a plan this machine cannot hold fails before anything
  // is created.
  std::vector<uint64_t> arenaBytes = largestRounds(plan);
  for (uint64_t bytes : arenaBytes)
    report.peakBufferBytes += bytes;
  uint64_t limit = options.memoryLimit ? options.memoryLimit
                                       : physicalMemory() / 10 * 9;
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

  LocalRun run(plan, pool, *sources, dst, *live, report);
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
