//===- PlanBuilder.cpp - Small plans for the analysis tests ---------------===//
#include "PlanBuilder.h"

namespace aoa::test {

PlanBuilder::PlanBuilder(uint32_t ranks, size_t rounds) {
  plan_.ranks = ranks;
  plan_.programs.resize(ranks);
  for (plan::RankProgram &program : plan_.programs)
    program.rounds.resize(rounds);
}

uint32_t PlanBuilder::addBuffer(uint32_t rank, size_t round, int64_t bytes) {
  plan::Round &r = roundOf(rank, round);
  r.buffers.push_back(plan::BufferDecl{DType::U8, {bytes}});
  return uint32_t(r.buffers.size() - 1);
}

PlanBuilder &PlanBuilder::read(uint32_t rank, size_t round, int64_t bytes) {
  plan::Instruction in;
  in.opcode = plan::Opcode::Read;
  in.buffer = addBuffer(rank, round, bytes);
  roundOf(rank, round).instructions.push_back(in);
  return *this;
}

PlanBuilder &PlanBuilder::send(uint32_t from, uint32_t to, size_t round,
                               int64_t bytes) {
  plan::Instruction send;
  send.opcode = plan::Opcode::Send;
  send.peer = to;
  send.buffers = {addBuffer(from, round, bytes)};
  roundOf(from, round).instructions.push_back(send);
  plan::Instruction recv;
  recv.opcode = plan::Opcode::Recv;
  recv.peer = from;
  recv.buffers = {addBuffer(to, round, bytes)};
  roundOf(to, round).instructions.push_back(recv);
  return *this;
}

PlanBuilder &PlanBuilder::copy(uint32_t rank, size_t round, int64_t bytes) {
  plan::Instruction in;
  in.opcode = plan::Opcode::Copy;
  in.input = addBuffer(rank, round, bytes);
  in.buffer = addBuffer(rank, round, bytes);
  roundOf(rank, round).instructions.push_back(in);
  return *this;
}

PlanBuilder &PlanBuilder::write(uint32_t rank, size_t round, int64_t bytes) {
  plan::Instruction in;
  in.opcode = plan::Opcode::Write;
  in.buffer = addBuffer(rank, round, bytes);
  roundOf(rank, round).instructions.push_back(in);
  return *this;
}

} // namespace aoa::test
