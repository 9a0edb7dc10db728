//===- RankDecoder.cpp - One rank's section of a binary plan --------------===//
//
// Rounds, buffers and instructions are flat arrays; a round's record says
// how many of the next buffers and instructions are its own. Every field an
// instruction's opcode uses must point inside the plan: buffers of its
// round, tensors of its side, the transform table, the plan's ranks.
//
//===----------------------------------------------------------------------===//
#include "PlanDecoder.h"

#include "BinaryLayout.h"

namespace aoa {
namespace binplan {

bool PlanDecoder::rankArrays(std::string_view bytes, RankArrays &arrays) {
  ByteCursor c(bytes);
  if (!c.has(40))
    return fail("ends before its counts");
  arrays.rounds = c.u64();
  arrays.buffers = c.u64();
  arrays.instructions = c.u64();
  arrays.listCount = c.u64();
  uint64_t intCount = c.u64();
  uint64_t left = c.remaining();
  auto take = [&](uint64_t n, uint64_t size) {
    if (n > left / size)
      return false;
    left -= n * size;
    return true;
  };
  if (!take(arrays.rounds, kRoundRecordSize) ||
      !take(arrays.buffers, kBufferRecordSize) ||
      !take(arrays.instructions, kInstructionRecordSize) ||
      !take(arrays.listCount, 4))
    return fail("its round, buffer, instruction and buffer-list counts are "
                "more than the section's bytes hold");
  arrays.roundRecords = c.take(arrays.rounds * kRoundRecordSize);
  arrays.bufferRecords = c.take(arrays.buffers * kBufferRecordSize);
  arrays.instructionRecords =
      c.take(arrays.instructions * kInstructionRecordSize);
  arrays.listEntries = c.take(arrays.listCount * 4);
  size_t padding = (8 - c.offset() % 8) % 8;
  if (!c.has(padding) ||
      c.take(padding).find_first_not_of('\0') != std::string_view::npos)
    return fail("its padding after the buffer lists is missing or not zero");
  if (c.remaining() != intCount * 8 || intCount > c.remaining() / 8)
    return fail("its integer count " + std::to_string(intCount) +
                " does not match the " + std::to_string(c.remaining()) +
                " bytes left");
  arrays.pool = c.take(intCount * 8);
  return true;
}

bool PlanDecoder::buffer(ByteCursor &records, std::string_view pool,
                         BufferShapes &shapes, plan::BufferDecl &decl,
                         Describe what) {
  uint8_t code = records.u8(), r1 = records.u8();
  uint16_t r2 = records.u16();
  uint32_t shapeRank = records.u32();
  uint64_t first = records.u64();
  if (r1 || r2)
    return fail(what() + " has a reserved field that is not zero");
  if (!knownDType(code))
    return dtype(code, decl.dtype, what());
  decl.dtype = DType(code);
  // A section stores each distinct shape once: its buffers of one shape
  // share one list.
  SharedShape &shape = shapes[{first, shapeRank}];
  if (shape.empty()) {
    llvm::SmallVector<int64_t, 4> extents;
    if (!ints(pool, first, shapeRank, extents, what()))
      return false;
    shape = SharedShape(extents);
  }
  decl.shape = shape;
  return true;
}

bool PlanDecoder::instruction(ByteCursor &records, const RankArrays &arrays,
                              plan::Instruction &in, Describe what) {
  InstructionRecord record;
  record.opcode = records.u8();
  record.regionRank = records.u8();
  uint16_t reserved = records.u16();
  record.a = records.u32();
  record.b = records.u32();
  record.c = records.u32();
  record.d = records.u64();
  if (record.opcode > uint8_t(plan::Opcode::Write))
    return fail(what() + " has an unknown opcode " +
                std::to_string(record.opcode));
  if (reserved)
    return fail(what() + " has a reserved field that is not zero");
  in.opcode = plan::Opcode(record.opcode);
  // A field the opcode does not use is zero, so that one plan has one
  // encoding.
  auto unusedNotZero = [&] {
    return fail(what() + " has a field its opcode does not use that is not "
                         "zero");
  };
  switch (in.opcode) {
  case plan::Opcode::Read:
  case plan::Opcode::Write:
    if (record.c)
      return unusedNotZero();
    in.buffer = record.a;
    in.tensor = record.b;
    if (!boxFits(arrays.pool, record.d, record.regionRank))
      return box(arrays.pool, record.d, record.regionRank, in.region,
                 what() + "'s region"); // says why
    in.region = decodeBox(arrays.pool, record.d, record.regionRank);
    return true;
  case plan::Opcode::Copy: {
    if (record.regionRank || record.d)
      return unusedNotZero();
    in.buffer = record.a;
    in.input = record.b;
    if (record.c >= transformLists_.size())
      return fail(what() + " refers to transform " + std::to_string(record.c) +
                  ", but the transform table has " +
                  std::to_string(transformLists_.size()));
    in.transform = transformLists_[record.c].planId;
    return true;
  }
  case plan::Opcode::Send:
  case plan::Opcode::Recv: {
    if (record.regionRank || record.c)
      return unusedNotZero();
    in.peer = record.a;
    uint32_t bufferCount = record.b;
    uint64_t firstBuffer = record.d, listCount = arrays.listCount;
    if (firstBuffer > listCount || bufferCount > listCount - firstBuffer)
      return fail(what() + " lists buffers " + std::to_string(firstBuffer) +
                  " + " + std::to_string(bufferCount) + " of " +
                  std::to_string(listCount));
    ByteCursor entries(
        arrays.listEntries.substr(firstBuffer * 4, uint64_t(bufferCount) * 4));
    in.buffers.resize(bufferCount);
    for (uint32_t &id : in.buffers)
      id = entries.u32();
    return true;
  }
  }
  return true;
}

bool PlanDecoder::instructionReferences(const plan::Instruction &in,
                                        uint32_t buffers, Describe what) {
  auto bufferOk = [&](uint32_t id) { return id < buffers; };
  bool usesBuffer = in.opcode == plan::Opcode::Read ||
                    in.opcode == plan::Opcode::Copy ||
                    in.opcode == plan::Opcode::Write;
  if (usesBuffer && !bufferOk(in.buffer))
    return fail(what() + " refers to buffer %" + std::to_string(in.buffer) +
                ", but the round declares " + std::to_string(buffers));
  if (in.opcode == plan::Opcode::Copy && !bufferOk(in.input))
    return fail(what() + " copies buffer %" + std::to_string(in.input) +
                ", but the round declares " + std::to_string(buffers));
  for (uint32_t id : in.buffers)
    if (!bufferOk(id))
      return fail(what() + " lists buffer %" + std::to_string(id) +
                  ", but the round declares " + std::to_string(buffers));
  uint64_t tensors = in.opcode == plan::Opcode::Read
                         ? plan_.sourceTensors.size()
                     : in.opcode == plan::Opcode::Write
                         ? plan_.destinationTensors.size()
                         : UINT64_MAX;
  if (in.tensor >= tensors)
    return fail(what() + " refers to tensor " + std::to_string(in.tensor) +
                ", but there are " + std::to_string(tensors));
  bool exchanges =
      in.opcode == plan::Opcode::Send || in.opcode == plan::Opcode::Recv;
  if (exchanges && in.peer >= plan_.ranks)
    return fail(what() + " names peer rank " + std::to_string(in.peer) +
                ", but the plan has " + std::to_string(plan_.ranks));
  return true;
}

bool PlanDecoder::program(uint32_t rankId, std::string_view bytes) {
  RankArrays arrays;
  if (!rankArrays(bytes, arrays))
    return false;
  plan::RankProgram &program = plan_.programs[rankId];
  program.rounds.resize(arrays.rounds);
  ByteCursor roundRecords(arrays.roundRecords),
      bufferRecords(arrays.bufferRecords),
      instructionRecords(arrays.instructionRecords);
  BufferShapes shapes;
  uint64_t buffersLeft = arrays.buffers;
  uint64_t instructionsLeft = arrays.instructions;
  for (uint64_t k = 0; k < arrays.rounds; ++k) {
    plan::Round &round = program.rounds[k];
    std::string roundName = "round " + std::to_string(k);
    uint32_t nb = roundRecords.u32(), ni = roundRecords.u32();
    if (nb > buffersLeft || ni > instructionsLeft)
      return fail(roundName + " declares more buffers or instructions than "
                              "the section holds");
    buffersLeft -= nb;
    instructionsLeft -= ni;
    round.buffers.resize(nb);
    // Named only when something is wrong: a section has tens of
    // thousands of records.
    for (uint32_t b = 0; b < nb; ++b)
      if (!buffer(bufferRecords, arrays.pool, shapes, round.buffers[b], [&] {
            return roundName + ", buffer %" + std::to_string(b);
          }))
        return false;
    round.instructions.resize(ni);
    for (uint32_t i = 0; i < ni; ++i) {
      auto what = [&] {
        return roundName + ", instruction " + std::to_string(i);
      };
      if (!instruction(instructionRecords, arrays, round.instructions[i],
                       what) ||
          !instructionReferences(round.instructions[i], nb, what))
        return false;
    }
  }
  if (buffersLeft || instructionsLeft)
    return fail("the rounds use fewer buffers or instructions than the "
                "section holds");
  return true;
}

} // namespace binplan
} // namespace aoa
