//===- LowerFusedQkvOld.cpp - TP-dependent fused QKV -----------------------===//
//
// A fused QKV weight stored per tensor-parallel rank as [Q heads of rank r |
// K heads of rank r | V heads of rank r], ranks concatenated along the axis.
// The statement is lowered to a split into per-head pieces in the source's
// order and a concat in the destination's order (reference §5.9).
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "FusedLayout.h"

namespace aoa {

namespace {

class LowerFusedQkvOldPass : public Pass {
public:
  const char *name() const override { return "lower-fused-qkv-old"; }
  const char *description() const override {
    return "lower fused_qkv_old (TP-dependent Q|K|V blocks) to split/concat";
  }
  bool run(CompilationState &state) override;
  void print(const CompilationState &state, std::ostream &os) const override {
    printStatements(state, os);
  }
};

/// The pieces in the order a TP-`t` layout stores them.
std::vector<Name> layout(const FusedExpansion &e, int64_t t, int64_t heads,
                         int64_t groups) {
  std::vector<Name> names;
  for (int64_t r = 0; r < t; ++r)
    for (auto [label, count] : {std::pair<const char *, int64_t>{"Q_", heads},
                                {"K_", groups},
                                {"V_", groups}})
      for (int64_t j = 0; j < count / t; ++j)
        names.push_back(e.piece(label, r * count / t + j));
  return names;
}

std::vector<Name> pieceRun(const FusedExpansion &e, const char *label, int64_t n) {
  std::vector<Name> names;
  for (int64_t i = 0; i < n; ++i)
    names.push_back(e.piece(label, i));
  return names;
}

/// The shard count of `name` along the fused axis, if it divides both head
/// counts; reports otherwise.
std::optional<int64_t> headShards(FusedExpansion &e, const Name &name,
                                  bool left, int64_t heads, int64_t groups) {
  const char *side = left ? "source" : "destination";
  std::optional<int64_t> t =
      left ? e.leftShardCount(name) : e.rightShardCount(name);
  if (!t || !e.checkDivisible(heads, "num_heads", *t, name, side) ||
      !e.checkDivisible(groups, "num_key_value_groups", *t, name, side))
    return std::nullopt;
  return t;
}

bool LowerFusedQkvOldPass::run(CompilationState &state) {
  std::vector<Statement> out;
  bool ok = true;
  size_t index = 0;
  for (Statement &statement : state.program.statements) {
    ++index;
    if (!statement.hasTag(MacroTag::FusedQkvOld)) {
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
    if (statement.lhs.size() == 1) {
      const Name &fused = statement.lhs[0];
      std::optional<int64_t> tSrc = headShards(e, fused, true, heads, groups);
      if (!tSrc) {
        ok = false;
        continue;
      }
      e.emit({fused}, layout(e, *tSrc, heads, groups), out);
      if (statement.rhs.size() == 1) {
        const Name &dst = statement.rhs[0];
        std::optional<int64_t> tDst = headShards(e, dst, false, heads, groups);
        if (!tDst) {
          ok = false;
          continue;
        }
        e.emit(layout(e, *tDst, heads, groups), {dst}, out);
      } else {
        e.emit(pieceRun(e, "Q_", heads), {statement.rhs[0]}, out);
        e.emit(pieceRun(e, "K_", groups), {statement.rhs[1]}, out);
        e.emit(pieceRun(e, "V_", groups), {statement.rhs[2]}, out);
      }
      continue;
    }
    // q, k, v -> D
    const Name &dst = statement.rhs[0];
    std::optional<int64_t> tDst = headShards(e, dst, false, heads, groups);
    if (!tDst) {
      ok = false;
      continue;
    }
    Name joined = e.temporary("qkv");
    e.emit(statement.lhs, {joined}, out);
    e.emit({joined}, layout(e, 1, heads, groups), out);
    e.emit(layout(e, *tDst, heads, groups), {dst}, out);
  }
  state.program.statements = std::move(out);
  return ok;
}

} // namespace

std::unique_ptr<Pass> createLowerFusedQkvOldPass() {
  return std::make_unique<LowerFusedQkvOldPass>();
}

} // namespace aoa
