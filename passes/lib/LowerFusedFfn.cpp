//===- LowerFusedFfn.cpp - TP-dependent fused gate/up ----------------------===//
//
// A fused gate/up weight stored per tensor-parallel rank as [gate block of
// rank r | up block of rank r]. Both sides are cut into lcm(t_src, t_dst)
// gate and up pieces so that every rank's block is whole pieces on both
// sides (reference §5.11).
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "FusedLayout.h"

#include "aoa/runtime/support/ThreadPool.h"

#include <algorithm>
#include <iterator>
#include <numeric>

namespace aoa {

namespace {

class LowerFusedFfnPass : public Pass {
public:
  const char *name() const override { return "lower-fused-ffn"; }
  const char *description() const override {
    return "lower fused_ffn (TP-dependent gate|up blocks) to split/concat";
  }
  bool run(CompilationState &state) override;
  void print(const CompilationState &state, std::ostream &os) const override {
    printStatements(state, os);
  }
};

/// The n gate and n up pieces in the order a TP-`t` layout stores them.
std::vector<Name> layout(const FusedExpansion &e, int64_t t, int64_t n) {
  std::vector<Name> names;
  names.reserve(2 * static_cast<size_t>(n));
  for (int64_t r = 0; r < t; ++r)
    for (const char *label : {"GATE_", "UP_"})
      for (int64_t j = 0; j < n / t; ++j)
        names.push_back(e.piece(label, r * n / t + j));
  return names;
}

std::vector<Name> pieceRun(const FusedExpansion &e, const char *label,
                           int64_t n) {
  std::vector<Name> names;
  names.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    names.push_back(e.piece(label, i));
  return names;
}

/// Appends what fused statement `statement` lowers to to `out`; false when
/// a shard count is unknown (reported, unless `e` is silent).
bool lowerStatement(FusedExpansion &e, const Statement &statement,
                    std::vector<Statement> &out) {
  if (statement.lhs.size() == 1) {
    const Name &fused = statement.lhs[0];
    std::optional<int64_t> tSrc = e.leftShardCount(fused);
    if (!tSrc)
      return false;
    if (statement.rhs.size() == 1) {
      std::optional<int64_t> tDst = e.rightShardCount(statement.rhs[0]);
      if (!tDst)
        return false;
      // n = lcm(t_src, t_dst) gate and n up pieces; 0 when that overflows.
      int64_t n = 0, pieces = 0;
      if (__builtin_mul_overflow(*tSrc / std::gcd(*tSrc, *tDst), *tDst, &n) ||
          __builtin_mul_overflow(n, 2, &pieces))
        pieces = 0;
      if (!e.checkPieceCount(pieces, fused, *tSrc, statement.rhs[0], *tDst))
        return false;
      e.emit({fused}, layout(e, *tSrc, n), out);
      e.emit(layout(e, *tDst, n), {statement.rhs[0]}, out);
    } else {
      e.emit({fused}, layout(e, *tSrc, *tSrc), out);
      e.emit(pieceRun(e, "GATE_", *tSrc), {statement.rhs[0]}, out);
      e.emit(pieceRun(e, "UP_", *tSrc), {statement.rhs[1]}, out);
    }
    return true;
  }
  // gate, up -> D
  std::optional<int64_t> tDst = e.rightShardCount(statement.rhs[0]);
  if (!tDst)
    return false;
  Name joined = e.temporary("gate_up");
  e.emit(statement.lhs, {joined}, out);
  e.emit({joined}, layout(e, 1, *tDst), out);
  e.emit(layout(e, *tDst, *tDst), {statement.rhs[0]}, out);
  return true;
}

/// Fused statements per task of lowerAhead: enough to outweigh starting a
/// task, few enough to share a model's tens of thousands of them.
constexpr size_t kStatementsPerTask = 256;

/// With threads, each fused statement lowered beforehand by a silent
/// expansion (lowering only reads the state: the chain and the key spaces),
/// by statement index; empty where that gave up, and where the statement is
/// not fused.
std::vector<std::optional<std::vector<Statement>>>
lowerAhead(CompilationState &state, const char *pass) {
  std::vector<std::optional<std::vector<Statement>>> lowered;
  if (state.threads <= 1)
    return lowered;
  const std::vector<Statement> &statements = state.program.statements;
  std::vector<size_t> fused;
  for (size_t i = 0; i < statements.size(); ++i)
    if (statements[i].hasTag(MacroTag::FusedFfn))
      fused.push_back(i);
  if (fused.size() < 2 * kStatementsPerTask)
    return lowered; // not worth a thread
  lowered.resize(statements.size());
  runtime::ThreadPool pool(state.threads);
  (void)pool.parallelFor(
      (fused.size() + kStatementsPerTask - 1) / kStatementsPerTask,
      [&](size_t task) {
        size_t end = std::min(fused.size(), (task + 1) * kStatementsPerTask);
        for (size_t k = task * kStatementsPerTask; k < end; ++k) {
          size_t i = fused[k];
          FusedExpansion e(state, statements[i], pass, i + 1,
                           FusedExpansion::Silent{});
          std::vector<Statement> out;
          if (lowerStatement(e, statements[i], out))
            lowered[i] = std::move(out);
        }
        return runtime::Status();
      }); // no task fails
  return lowered;
}

bool LowerFusedFfnPass::run(CompilationState &state) {
  std::vector<std::optional<std::vector<Statement>>> lowered =
      lowerAhead(state, name());
  std::vector<Statement> out;
  bool ok = true;
  for (size_t i = 0; i < state.program.statements.size(); ++i) {
    Statement &statement = state.program.statements[i];
    if (!statement.hasTag(MacroTag::FusedFfn)) {
      // (Moved, not copied: a large model has tens of thousands.)
      out.push_back(std::move(statement));
      continue;
    }
    if (i < lowered.size() && lowered[i]) {
      std::move(lowered[i]->begin(), lowered[i]->end(),
                std::back_inserter(out));
      continue;
    }
    FusedExpansion e(state, statement, name(), i + 1);
    ok &= lowerStatement(e, statement, out);
  }
  state.program.statements = std::move(out);
  return ok;
}

} // namespace

std::unique_ptr<Pass> createLowerFusedFfnPass() {
  return std::make_unique<LowerFusedFfnPass>();
}

} // namespace aoa
