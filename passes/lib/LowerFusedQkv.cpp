//===- LowerFusedQkv.cpp - Grouped-query QKV fusion ------------------------===//
//
// q, k, v <-> one fused weight in grouped order: for each of the G key/value
// heads, its H/G query heads, then its key head, then its value head
// (reference §5.12). The layout does not depend on the TP degree.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "FusedLayout.h"

namespace aoa {

namespace {

class LowerFusedQkvPass : public Pass {
public:
  const char *name() const override { return "lower-fused-qkv"; }
  const char *description() const override {
    return "lower fused_qkv (grouped-query q, k, v <-> fused) to split/concat";
  }
  bool run(CompilationState &state) override;
  void print(const CompilationState &state, std::ostream &os) const override {
    printStatements(state, os);
  }
};

bool LowerFusedQkvPass::run(CompilationState &state) {
  std::vector<Statement> out;
  bool ok = true;
  size_t index = 0;
  for (Statement &statement : state.program.statements) {
    ++index;
    if (!statement.hasTag(MacroTag::FusedQkv)) {
      // (Moved, not copied: a large model has tens of thousands.)
      out.push_back(std::move(statement));
      continue;
    }
    FusedExpansion e(state, statement, name(), index);
    int64_t heads = statement.findAttribute("num_heads")->integer();
    int64_t groups = statement.findAttribute("num_key_value_groups")->integer();
    if (!e.checkHeadBounds(heads, groups)) {
      ok = false;
      continue;
    }
    int64_t perGroup = heads / groups;
    auto pieces = [&](const char *label, int64_t n) {
      std::vector<Name> names;
      for (int64_t i = 0; i < n; ++i)
        names.push_back(e.piece(label, i));
      return names;
    };
    std::vector<Name> grouped;
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t h = g * perGroup; h < (g + 1) * perGroup; ++h)
        grouped.push_back(e.piece("q", h));
      grouped.push_back(e.piece("k", g));
      grouped.push_back(e.piece("v", g));
    }
    if (statement.lhs.size() == 1) {
      e.emit({statement.lhs[0]}, grouped, out);
      e.emit(pieces("q", heads), {statement.rhs[0]}, out);
      e.emit(pieces("k", groups), {statement.rhs[1]}, out);
      e.emit(pieces("v", groups), {statement.rhs[2]}, out);
    } else {
      e.emit({statement.lhs[0]}, pieces("q", heads), out);
      e.emit({statement.lhs[1]}, pieces("k", groups), out);
      e.emit({statement.lhs[2]}, pieces("v", groups), out);
      e.emit(grouped, {statement.rhs[0]}, out);
    }
  }
  state.program.statements = std::move(out);
  return ok;
}

} // namespace

std::unique_ptr<Pass> createLowerFusedQkvPass() {
  return std::make_unique<LowerFusedQkvPass>();
}

} // namespace aoa
