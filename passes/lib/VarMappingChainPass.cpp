//===- VarMappingChainPass.cpp - Record name links -------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/ir/IntegerList.h"
#include "aoa/passes/AxisTrace.h"
#include "aoa/passes/CompilationState.h"

#include <algorithm>
#include <ostream>

namespace aoa {

namespace {

/// The permute and reshape attributes of a 1 -> 1 statement, in the order
/// they are written (the order build-ops chains them in).
std::vector<AxisStep> axisSteps(const Statement &statement) {
  std::vector<AxisStep> steps;
  if (statement.lhs.size() != 1 || statement.rhs.size() != 1)
    return steps; // other forms take no permute or reshape
  for (const Attribute &attribute : statement.attributes) {
    if (!attribute.isString())
      continue;
    AxisStep step;
    step.location = attribute.valueLocation;
    if (attribute.key == "permute") {
      step.kind = AxisStep::Kind::Permute;
      step.permutation = attribute.string();
    } else if (attribute.key == "reshape") {
      step.kind = AxisStep::Kind::Reshape;
      // An invalid shape is build-ops' error; the trace then reports that it
      // cannot follow the axis, which is never a wrong count.
      step.canonicalShape =
          parseIntegerList(attribute.string()).value_or(std::vector<int64_t>{});
    } else {
      continue;
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

class VarMappingChainPass : public Pass {
public:
  const char *name() const override { return "var-mapping-chain"; }
  const char *description() const override {
    return "record which names lead to which, for the fused macros' shard "
           "counts";
  }
  bool run(CompilationState &state) override {
    state.chain = VarMappingChain();
    for (const Statement &statement : state.program.statements) {
      std::vector<ChainName> lhs, rhs;
      std::vector<std::vector<AxisStep>> steps;
      std::vector<AxisStep> own = axisSteps(statement);
      for (const Name &name : statement.lhs) {
        if (name.isPlaceholder())
          continue;
        lhs.push_back({name.text, name.temporary});
        // `X^T` reverses X's axes before the statement's own attributes.
        steps.emplace_back();
        if (name.transposed)
          steps.back().push_back(reverseAllAxes(name.location));
        steps.back().insert(steps.back().end(), own.begin(), own.end());
      }
      for (const Name &name : statement.rhs)
        if (!name.isPlaceholder())
          rhs.push_back({name.text, name.temporary});
      // `w^T -> w, fused_ffn` is not an in-place change its own expansion
      // must fear: lower-transpose-suffix gives the macro a temporary for
      // w^T, and the result's axes are the output's.
      if (!statement.tags.empty())
        for (size_t i = 0; i < lhs.size(); ++i)
          if (std::find(rhs.begin(), rhs.end(), lhs[i]) != rhs.end())
            steps[i].clear();
      state.chain.addStatement(lhs, steps, rhs);
    }
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    state.chain.print(os);
  }
};

} // namespace

std::unique_ptr<Pass> createVarMappingChainPass() {
  return std::make_unique<VarMappingChainPass>();
}

} // namespace aoa
