//===- ExpandArrays.cpp - name[a:b] ----------------------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/passes/CompilationState.h"
#include "MacroUtils.h"

namespace aoa {

namespace {

class ExpandArraysPass : public Pass {
public:
  const char *name() const override { return "expand-arrays"; }
  const char *description() const override {
    return "expand name[a:b] into name_a, ..., name_(b-1)";
  }
  bool run(CompilationState &state) override {
    for (Statement &statement : state.program.statements) {
      bool hasRange = false;
      for (const std::vector<Name> *side : {&statement.lhs, &statement.rhs})
        for (const Name &name : *side)
          hasRange |= name.range.has_value();
      if (!hasRange)
        continue;
      Statement child = deriveStatement(statement, name());
      child.tags = statement.tags;
      child.attributes = statement.attributes;
      auto expand = [](const std::vector<Name> &names) {
        std::vector<Name> result;
        for (const Name &name : names) {
          if (!name.range) {
            result.push_back(name);
            continue;
          }
          for (int64_t i = name.range->begin; i < name.range->end; ++i) {
            Name element = name;
            element.range.reset();
            element.text = name.text + "_" + std::to_string(i);
            result.push_back(std::move(element));
          }
        }
        return result;
      };
      child.lhs = expand(statement.lhs);
      child.rhs = expand(statement.rhs);
      statement = std::move(child);
    }
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    printStatements(state, os);
  }
};

} // namespace

std::unique_ptr<Pass> createExpandArraysPass() {
  return std::make_unique<ExpandArraysPass>();
}

} // namespace aoa
