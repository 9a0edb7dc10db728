//===- VarMappingChainPass.cpp - Record name links -------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/passes/CompilationState.h"

#include <ostream>

namespace aoa {

namespace {

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
      std::vector<std::string> lhs, rhs;
      for (const Name &name : statement.lhs)
        if (!name.isPlaceholder())
          lhs.push_back(name.text);
      for (const Name &name : statement.rhs)
        if (!name.isPlaceholder())
          rhs.push_back(name.text);
      state.chain.addStatement(lhs, rhs);
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
