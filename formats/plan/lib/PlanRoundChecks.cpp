//===- PlanRoundChecks.cpp - Buffers and instructions of a round ----------===//
//
// Within one round of one rank: every declared buffer is defined once, by a
// read, recv or copy, before it is used; instructions come in phase order
// (reads, the exchange, copies, writes); reads, copies and writes agree with
// the types of the buffers they define or use.
//
//===----------------------------------------------------------------------===//
#include "PlanChecker.h"

#include "PlanTextSyntax.h"
#include "TransformTypes.h"

#include <algorithm>

namespace aoa {
namespace plancheck {

namespace {

using plan::Opcode;

/// Reads, then the exchange, then copies, then writes.
int phaseOf(Opcode opcode) {
  switch (opcode) {
  case Opcode::Read:
    return 0;
  case Opcode::Send:
  case Opcode::Recv:
    return 1;
  case Opcode::Copy:
    return 2;
  case Opcode::Write:
    return 3;
  }
  return 0;
}

constexpr const char *kPhaseHint =
    "a round reads, then sends and receives, then copies, then writes; "
    "order its instructions that way (or move this one to another round)";

std::string phaseName(int phase) {
  switch (phase) {
  case 1:
    return "the exchange (send, recv)";
  case 2:
    return "a copy";
  case 3:
    return "a write";
  default:
    return "a read";
  }
}

template <typename Fn> void forEachResult(const plan::Instruction &in, Fn fn) {
  switch (in.opcode) {
  case Opcode::Read:
  case Opcode::Copy:
    fn(in.buffer, 0);
    return;
  case Opcode::Recv:
    for (uint32_t j = 0; j < in.buffers.size(); ++j)
      fn(in.buffers[j], j);
    return;
  case Opcode::Send:
  case Opcode::Write:
    return;
  }
}

} // namespace

void PlanChecker::checkRound(uint32_t r, uint32_t k) {
  // Definitions first, so uses can say "used before it is defined".
  defineBuffers(r, k);
  checkInstructions(r, k);
}

/// Records the instruction defining each buffer of round k of rank r, and
/// whether its declaration is valid.
void PlanChecker::defineBuffers(uint32_t r, uint32_t k) {
  const plan::Round &round = plan_.programs[r].rounds[k];
  const std::vector<plan::Instruction> &list = round.instructions;
  definer_.assign(round.buffers.size(), kUndefined);
  declOk_.assign(round.buffers.size(), false);
  for (uint32_t i = 0; i < list.size(); ++i) {
    const plan::Instruction &in = list[i];
    forEachResult(in, [&](uint32_t id, uint32_t item) {
      if (id >= round.buffers.size()) {
        error(at(r, k, i, Field::Result, item),
              "buffer %" + std::to_string(id) +
                  " is not declared: the round has " +
                  plural(round.buffers.size(), "buffer"))
            .hint("declare every buffer of a round in Round::buffers");
      } else if (definer_[id] != kUndefined) {
        auto diag = error(at(r, k, i, Field::Result, item),
                          "buffer %" + std::to_string(id) +
                              " is defined twice in this round");
        note(diag,
             at(r, k, definer_[id], Field::Result,
                resultItem(list[definer_[id]], id)),
             "first defined here");
        diag.hint("every read, recv and copy defines new buffers");
      } else {
        definer_[id] = i;
        if (checkedBytes(round.buffers[id])) {
          declOk_[id] = true;
        } else {
          error(at(r, k, i, Field::ResultType, item),
                "buffer %" + std::to_string(id) + " of type " +
                    typeText(round.buffers[id]) + " has no valid size in bytes")
              .hint("extents are non-negative and a buffer has fewer than "
                    "2^63 bytes");
        }
      }
    });
  }
  for (uint32_t id = 0; id < round.buffers.size(); ++id)
    if (definer_[id] == kUndefined)
      error(roundSite(r, k),
            "buffer %" + std::to_string(id) +
                " is declared, but no instruction of the round defines it")
          .hint("every buffer of a round is the result of one read, recv or "
                "copy");
}

/// Phase order, then each instruction by its opcode.
void PlanChecker::checkInstructions(uint32_t r, uint32_t k) {
  const plan::Round &round = plan_.programs[r].rounds[k];
  const std::vector<plan::Instruction> &list = round.instructions;
  int phase = 0;
  for (uint32_t i = 0; i < list.size() && !errors_.stopped(); ++i) {
    const plan::Instruction &in = list[i];
    int p = phaseOf(in.opcode);
    if (p < phase)
      error(at(r, k, i), "'" + std::string(plantext::opcodeName(in.opcode)) +
                             "' comes after " + phaseName(phase) +
                             " in this round")
          .hint(kPhaseHint);
    phase = std::max(phase, p);
    switch (in.opcode) {
    case Opcode::Read:
      checkRead(r, k, i, round);
      break;
    case Opcode::Send:
    case Opcode::Recv:
      checkExchangeInstruction(r, k, i, round);
      break;
    case Opcode::Copy:
      checkCopy(r, k, i, round);
      break;
    case Opcode::Write:
      checkWrite(r, k, i, round);
      break;
    }
  }
}

uint32_t PlanChecker::resultItem(const plan::Instruction &in, uint32_t id) {
  if (in.opcode == Opcode::Recv)
    for (uint32_t j = 0; j < in.buffers.size(); ++j)
      if (in.buffers[j] == id)
        return j;
  return 0;
}

/// True when buffer `id` may be used by instruction `i`: defined earlier in
/// the round, with a valid declaration.
bool PlanChecker::usable(uint32_t r, uint32_t k, uint32_t i, uint32_t id,
                         const PlanSite &use) {
  const plan::Round &round = plan_.programs[r].rounds[k];
  if (id >= definer_.size() || definer_[id] == kUndefined) {
    error(use,
          "buffer %" + std::to_string(id) + " is not defined in this round")
        .hint("buffers live for one round: define it in this round with a "
              "read, recv or copy");
    return false;
  }
  if (definer_[id] >= i) {
    auto diag = error(use, "buffer %" + std::to_string(id) +
                               " is used before it is defined");
    note(diag,
         at(r, k, definer_[id], Field::Result,
            resultItem(round.instructions[definer_[id]], id)),
         "defined here");
    diag.hint(kPhaseHint);
    return false;
  }
  return declOk_[id];
}

void PlanChecker::checkRead(uint32_t r, uint32_t k, uint32_t i,
                            const plan::Round &round) {
  const plan::Instruction &in = round.instructions[i];
  const plan::StoredTensor *t = tensorOf(r, k, i, false);
  if (!t || !checkRegion(r, k, i, *t, false))
    return;
  if (in.buffer >= round.buffers.size() || !declOk_[in.buffer])
    return;
  const plan::BufferDecl &decl = round.buffers[in.buffer];
  if (decl.dtype != t->dtype)
    error(at(r, k, i, Field::ResultType),
          "read gives " + std::string(dtypeName(t->dtype)) +
              " data, but buffer %" + std::to_string(in.buffer) +
              " is declared " + typeText(decl))
        .hint("a read does not convert; declare the buffer as the stored "
              "dtype and cast with a copy");
  else if (!in.region.hasShape(decl.shape))
    error(at(r, k, i, Field::ResultType),
          "buffer %" + std::to_string(in.buffer) + " is declared " +
              typeText(decl) + ", but region " + in.region.toString() +
              " has shape " + formatShape(in.region.shape()))
        .hint("a read fills its buffer with exactly the region, in "
              "row-major order");
}

void PlanChecker::checkWrite(uint32_t r, uint32_t k, uint32_t i,
                             const plan::Round &round) {
  const plan::Instruction &in = round.instructions[i];
  const plan::StoredTensor *t = tensorOf(r, k, i, true);
  bool regionOk = t && checkRegion(r, k, i, *t, true);
  if (!usable(r, k, i, in.buffer, at(r, k, i, Field::Operand)) || !regionOk)
    return;
  const plan::BufferDecl &decl = round.buffers[in.buffer];
  if (decl.dtype != t->dtype)
    error(at(r, k, i, Field::Operand),
          "buffer %" + std::to_string(in.buffer) + " holds " +
              std::string(dtypeName(decl.dtype)) +
              " data, but destination tensor " + std::to_string(in.tensor) +
              " (key " + quote(t->key) + ") is " +
              std::string(dtypeName(t->dtype)))
        .hint("a write does not convert; cast with a copy before it");
  else if (!in.region.hasShape(decl.shape))
    error(at(r, k, i, Field::Operand),
          "buffer %" + std::to_string(in.buffer) + " is " + typeText(decl) +
              ", but region " + in.region.toString() + " has shape " +
              formatShape(in.region.shape()))
        .hint("a write stores exactly its buffer into the region, in "
              "row-major order");
}

void PlanChecker::checkCopy(uint32_t r, uint32_t k, uint32_t i,
                            const plan::Round &round) {
  const plan::Instruction &in = round.instructions[i];
  if (!usable(r, k, i, in.input, at(r, k, i, Field::Operand)))
    return;
  DType dtype = round.buffers[in.input].dtype;
  std::vector<int64_t> shape(round.buffers[in.input].shape.begin(),
                             round.buffers[in.input].shape.end());
  if (in.transform >= plan_.transforms.size()) {
    error(at(r, k, i, Field::Whole),
          "the copy names transform " + std::to_string(in.transform) +
              ", but the plan has " + std::to_string(plan_.transforms.size()))
        .hint("the plan is inconsistent; recompile it");
    return;
  }
  const std::vector<plan::TransformStep> &steps = plan_.steps(in);
  for (uint32_t j = 0; j < steps.size(); ++j) {
    std::string why;
    if (!applyStep(steps[j], dtype, shape, why)) {
      error(at(r, k, i, Field::Step, j), why)
          .hint("steps apply in order to the input buffer %" +
                std::to_string(in.input) + " (" +
                typeText(round.buffers[in.input]) + ")");
      return;
    }
  }
  if (in.buffer >= round.buffers.size() || !declOk_[in.buffer])
    return;
  const plan::BufferDecl &decl = round.buffers[in.buffer];
  if (decl.dtype != dtype ||
      llvm::ArrayRef<int64_t>(decl.shape) != llvm::ArrayRef<int64_t>(shape))
    error(at(r, k, i, Field::ResultType),
          "copy gives " + typeText(dtype, shape) + ", but buffer %" +
              std::to_string(in.buffer) + " is declared " + typeText(decl))
        .hint("the output's type is the input's (" +
              typeText(round.buffers[in.input]) +
              ") after the transform steps, in order");
}

} // namespace plancheck
} // namespace aoa
