//===- RankRound.cpp ------------------------------------------------------===//
#include "aoa/runtime/exec/RankRound.h"

#include "aoa/runtime/storage/DestinationFiles.h"
#include "aoa/runtime/storage/SourceFiles.h"
#include "aoa/runtime/storage/StoredRegion.h"
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/TransformStages.h"
#include "aoa/runtime/transforms/TransformSteps.h"

#include <algorithm>
#include <cstring>

namespace aoa::runtime {

namespace {

using plan::Opcode;

/// Buffers start on cache-line boundaries.
constexpr uint64_t kBufferAlignment = 64;

uint64_t alignUp(uint64_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

/// Which buffers of a round a recv defines.
std::vector<uint8_t> receivedBuffers(const plan::Round &round) {
  std::vector<uint8_t> received(round.buffers.size(), 0);
  for (const plan::Instruction &inst : round.instructions)
    if (inst.opcode == Opcode::Recv)
      for (uint32_t b : inst.buffers)
        if (b < received.size())
          received[b] = 1;
  return received;
}

Error prefixed(const std::string &where, const Error &error) {
  return Error{where + ": " + error.message, error.hint};
}

} // namespace

uint64_t roundArenaBytes(const plan::Round &round, ReceivedBuffers received) {
  std::vector<uint8_t> skip;
  if (received == ReceivedBuffers::Borrowed)
    skip = receivedBuffers(round);
  uint64_t bytes = 0;
  for (size_t b = 0; b < round.buffers.size(); ++b)
    if (skip.empty() || !skip[b])
      bytes += alignUp(uint64_t(round.buffers[b].bytes()));
  return bytes;
}

uint64_t largestRoundArenaBytes(const plan::Plan &plan, uint32_t rank,
                                ReceivedBuffers received) {
  uint64_t largest = 0;
  if (rank < plan.programs.size())
    for (const plan::Round &round : plan.programs[rank].rounds)
      largest = std::max(largest, roundArenaBytes(round, received));
  return largest;
}

RankRound::RankRound(const plan::Plan &plan, uint32_t rank, size_t round,
                     llvm::ArrayRef<uint8_t> live)
    : plan_(plan), rank_(rank), roundNumber_(round) {
  if (rank >= plan.programs.size() ||
      round >= plan.programs[rank].rounds.size())
    return;
  round_ = &plan.programs[rank].rounds[round];
  const std::vector<plan::Instruction> &instructions = round_->instructions;
  // level[buffer]: the copy level that defines it (-1: a read or a recv).
  std::vector<int> level(round_->buffers.size(), -1);
  for (uint32_t i = 0; i < instructions.size(); ++i) {
    if (!live.empty() && !live[i])
      continue;
    const plan::Instruction &inst = instructions[i];
    switch (inst.opcode) {
    case Opcode::Read:
      reads_.push_back(i);
      break;
    case Opcode::Send:
      sends_.push_back(i);
      break;
    case Opcode::Recv:
      receives_.push_back(i);
      break;
    case Opcode::Copy: {
      int copyLevel = level[inst.input] + 1;
      level[inst.buffer] = copyLevel;
      if (copyLevels_.size() <= size_t(copyLevel))
        copyLevels_.resize(size_t(copyLevel) + 1);
      copyLevels_[size_t(copyLevel)].push_back(i);
      break;
    }
    case Opcode::Write:
      writes_.push_back(i);
      break;
    }
  }
  pointers_.assign(round_->buffers.size(), nullptr);
}

bool RankRound::empty() const {
  return reads_.empty() && sends_.empty() && receives_.empty() &&
         copyLevels_.empty() && writes_.empty();
}

std::string RankRound::where() const {
  return "rank " + std::to_string(rank_) + ", round " +
         std::to_string(roundNumber_);
}

void RankRound::layOutBuffers(uint8_t *arena, ReceivedBuffers received) {
  if (!round_)
    return;
  std::vector<uint8_t> skip;
  if (received == ReceivedBuffers::Borrowed)
    skip = receivedBuffers(*round_);
  pointers_.assign(round_->buffers.size(), nullptr);
  uint64_t offset = 0;
  for (size_t b = 0; b < round_->buffers.size(); ++b) {
    if (!skip.empty() && skip[b])
      continue;
    pointers_[b] = arena + offset;
    offset += alignUp(uint64_t(round_->buffers[b].bytes()));
  }
}

std::vector<uint8_t>
RankRound::buffersInArena(ReceivedBuffers received,
                          llvm::ArrayRef<uint8_t> copiedDirectly) const {
  if (!round_)
    return {};
  std::vector<uint8_t> used(round_->buffers.size(), 0);
  auto use = [&](uint32_t b) {
    if (b < used.size())
      used[b] = 1;
  };
  auto direct = [&](uint32_t i) {
    return i < copiedDirectly.size() && copiedDirectly[i];
  };
  for (uint32_t i : reads_)
    if (!direct(i))
      use(instruction(i).buffer);
  for (uint32_t i : writes_)
    if (!direct(i))
      use(instruction(i).buffer);
  for (const std::vector<uint32_t> &level : copyLevels_)
    for (uint32_t i : level) {
      use(instruction(i).input);
      use(instruction(i).buffer);
    }
  for (uint32_t i : sends_)
    for (uint32_t b : instruction(i).buffers)
      use(b);
  for (uint32_t i : receives_)
    for (uint32_t b : instruction(i).buffers)
      use(b);
  if (received == ReceivedBuffers::Borrowed) {
    std::vector<uint8_t> borrowed = receivedBuffers(*round_);
    for (size_t b = 0; b < used.size(); ++b)
      used[b] &= uint8_t(!borrowed[b]);
  }
  return used;
}

uint64_t RankRound::arenaBytes(llvm::ArrayRef<uint8_t> inArena) const {
  uint64_t bytes = 0;
  for (size_t b = 0; b < inArena.size(); ++b)
    if (inArena[b])
      bytes += alignUp(uint64_t(round_->buffers[b].bytes()));
  return bytes;
}

void RankRound::layOutBuffers(uint8_t *arena, llvm::ArrayRef<uint8_t> inArena) {
  if (!round_)
    return;
  pointers_.assign(round_->buffers.size(), nullptr);
  uint64_t offset = 0;
  for (size_t b = 0; b < inArena.size(); ++b)
    if (inArena[b]) {
      pointers_[b] = arena + offset;
      offset += alignUp(uint64_t(round_->buffers[b].bytes()));
    }
}

Status RankRound::runRead(uint32_t i, const SourceFiles &sources) const {
  const plan::Instruction &inst = instruction(i);
  Status status =
      sources.readRegion(inst.tensor, inst.region, pointers_[inst.buffer],
                         size_t(bufferBytes(inst.buffer)));
  if (!status.ok())
    return prefixed(where(), status.error());
  return Status();
}

Status RankRound::runCopy(uint32_t i) const {
  const plan::Instruction &inst = instruction(i);
  const plan::BufferDecl &in = round_->buffers[inst.input];
  const plan::BufferDecl &out = round_->buffers[inst.buffer];
  TransformCastFailure failure;
  failure.offset = kNoCastFailure;
  Status status = applyTransformSteps(
      plan_.steps(inst),
      TensorView(pointers_[inst.input], size_t(in.bytes()), in.dtype, in.shape),
      MutableTensorView(pointers_[inst.buffer], size_t(out.bytes()), out.dtype,
                        out.shape),
      &failure);
  if (!status.ok() && failure.offset != kNoCastFailure)
    return castFailure(i, failure.from, failure.to, failure.offset);
  if (!status.ok())
    return prefixed(where(), status.error());
  return Status();
}

Error RankRound::castFailure(uint32_t i, DType from, DType to,
                             uint64_t offset) const {
  uint32_t buffer = instruction(i).buffer;
  // Follow the element through the copies that read its buffer until a
  // write stores it (a round is acyclic; the bound guards a bad plan).
  for (size_t hops = 0; hops <= round_->instructions.size(); ++hops) {
    const plan::Instruction *next = nullptr;
    for (const plan::Instruction &inst : round_->instructions) {
      if (inst.opcode == Opcode::Write && inst.buffer == buffer) {
        const plan::StoredTensor &tensor =
            plan_.destinationTensors[inst.tensor];
        // The buffer is the region, row-major.
        std::vector<int64_t> coordinates(inst.region.rank());
        uint64_t rest = offset;
        for (size_t d = inst.region.rank(); d-- > 0;) {
          uint64_t extent = uint64_t(inst.region.dim(d).size());
          coordinates[d] = inst.region.dim(d).begin + int64_t(rest % extent);
          rest /= extent;
        }
        uint64_t flat = 0;
        for (size_t d = 0; d < coordinates.size(); ++d)
          flat =
              flat * uint64_t(tensor.globalShape[d]) + uint64_t(coordinates[d]);
        return prefixed(
            where(),
            castFailureError(from, to,
                             "element " + formatShape(coordinates) +
                                 " (flat index " + std::to_string(flat) +
                                 ") of destination key '" + tensor.key + "'"));
      }
      if (inst.opcode == Opcode::Copy && inst.input == buffer && !next)
        next = &inst;
    }
    if (!next)
      break;
    const plan::BufferDecl &in = round_->buffers[next->input];
    const plan::BufferDecl &out = round_->buffers[next->buffer];
    Expected<std::vector<TransformStage>> stages = planTransformStages(
        plan_.steps(*next), in.dtype, in.shape, out.dtype, out.shape);
    if (!stages.ok())
      break;
    offset = transformInputOffset(*stages, offset);
    buffer = next->buffer;
  }
  return prefixed(
      where(), castFailureError(from, to,
                                "element " + std::to_string(offset) +
                                    " of buffer %" + std::to_string(buffer)));
}

Status RankRound::checkWrite(uint32_t i) const {
  const plan::Instruction &inst = instruction(i);
  const plan::BufferDecl &buffer = round_->buffers[inst.buffer];
  const plan::StoredTensor &tensor = plan_.destinationTensors[inst.tensor];
  if (buffer.dtype != tensor.dtype ||
      buffer.bytes() != inst.region.volume() * int64_t(dtypeSize(tensor.dtype)))
    return Error{where() + ": writing " + tensor.key + inst.region.toString() +
                     " from a buffer of " +
                     std::string(dtypeName(buffer.dtype)) +
                     formatShape(buffer.shape) + " into " +
                     std::string(dtypeName(tensor.dtype)) + " data",
                 "the plan is inconsistent; recompile it"};
  return Status();
}

Status RankRound::runWrite(uint32_t i, DestinationFiles &destinations) const {
  if (Status checked = checkWrite(i); !checked.ok())
    return checked;
  const plan::Instruction &inst = instruction(i);
  Status status = destinations.writeRegion(inst.tensor, inst.region,
                                           pointers_[inst.buffer]);
  if (!status.ok())
    return prefixed(where(), status.error());
  return Status();
}

Status RankRound::runWriteToMemory(uint32_t i, uint8_t *tensorData) const {
  if (Status checked = checkWrite(i); !checked.ok())
    return checked;
  const plan::Instruction &inst = instruction(i);
  const plan::StoredTensor &tensor = plan_.destinationTensors[inst.tensor];
  if (!tensorData)
    return Error{where() + ": writing " + tensor.key + inst.region.toString() +
                     " into a tensor the caller did not give",
                 "this is a bug in aoa; please report it"};
  size_t elementSize = dtypeSize(tensor.dtype);
  const uint8_t *buffer = pointers_[inst.buffer];
  // The runs a file write would store with pwrite, as copies.
  Status walk = forEachStoredRun(
      tensor.box, tensor.flat, inst.region, [&](const StoredRun &run) {
        std::memcpy(tensorData + size_t(run.storedOffset) * elementSize,
                    buffer + size_t(run.regionOffset) * elementSize,
                    size_t(run.count) * elementSize);
        return true;
      });
  if (!walk.ok())
    return prefixed(where(), walk.error());
  return Status();
}

} // namespace aoa::runtime
