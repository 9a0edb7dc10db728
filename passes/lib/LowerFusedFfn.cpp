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
  for (int64_t r = 0; r < t; ++r)
    for (const char *label : {"GATE", "UP"})
      for (int64_t j = 0; j < n / t; ++j)
        names.push_back(
            e.piece(std::string(label) + "_" + std::to_string(r * n / t + j)));
  return names;
}

std::vector<Name> pieceRun(const FusedExpansion &e, const char *label,
                           int64_t n) {
  std::vector<Name> names;
  for (int64_t i = 0; i < n; ++i)
    names.push_back(e.piece(std::string(label) + "_" + std::to_string(i)));
  return names;
}

bool LowerFusedFfnPass::run(CompilationState &state) {
  std::vector<Statement> out;
  bool ok = true;
  size_t index = 0;
  for (Statement &statement : state.program.statements) {
    ++index;
    if (!statement.hasTag(MacroTag::FusedFfn)) {
      // (Moved, not copied: a large model has tens of thousands.)
      out.push_back(std::move(statement));
      continue;
    }
    FusedExpansion e(state, statement, name(), index);
    if (statement.lhs.size() == 1) {
      const Name &fused = statement.lhs[0];
      std::optional<int64_t> tSrc = e.leftShardCount(fused);
      if (!tSrc) {
        ok = false;
        continue;
      }
      if (statement.rhs.size() == 1) {
        std::optional<int64_t> tDst = e.rightShardCount(statement.rhs[0]);
        if (!tDst) {
          ok = false;
          continue;
        }
        int64_t n = std::lcm(*tSrc, *tDst);
        e.emit({fused}, layout(e, *tSrc, n), out);
        e.emit(layout(e, *tDst, n), {statement.rhs[0]}, out);
      } else {
        e.emit({fused}, layout(e, *tSrc, *tSrc), out);
        e.emit(pieceRun(e, "GATE", *tSrc), {statement.rhs[0]}, out);
        e.emit(pieceRun(e, "UP", *tSrc), {statement.rhs[1]}, out);
      }
      continue;
    }
    // gate, up -> D
    std::optional<int64_t> tDst = e.rightShardCount(statement.rhs[0]);
    if (!tDst) {
      ok = false;
      continue;
    }
    Name joined = e.temporary("gate_up");
    e.emit(statement.lhs, {joined}, out);
    e.emit({joined}, layout(e, 1, *tDst), out);
    e.emit(layout(e, *tDst, *tDst), {statement.rhs[0]}, out);
  }
  state.program.statements = std::move(out);
  return ok;
}

} // namespace

std::unique_ptr<Pass> createLowerFusedFfnPass() {
  return std::make_unique<LowerFusedFfnPass>();
}

} // namespace aoa
