//===- LowerTransposeSuffix.cpp - `X^T` ------------------------------------===//
//
// `X^T -> Y` becomes `X -> %transpose.N.X, permute="[]"` (reverse all axes)
// followed by the statement reading the temporary. Helper statements come in
// the order their names first appear (Paddle's order is unspecified). The
// temporary is recorded in the variable-mapping chain as X with its axes
// reversed, so the fused macros can count X's shards along the right axis.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "MacroUtils.h"
#include "aoa/passes/AxisTrace.h"
#include "aoa/passes/CompilationState.h"

#include <map>

namespace aoa {

namespace {

class LowerTransposeSuffixPass : public Pass {
public:
  const char *name() const override { return "lower-transpose-suffix"; }
  const char *description() const override {
    return "turn X^T into a permute statement on a temporary";
  }
  bool run(CompilationState &state) override {
    std::vector<Statement> out;
    size_t index = 0;
    for (Statement &statement : state.program.statements) {
      ++index;
      bool any = false;
      for (const Name &name : statement.lhs)
        any |= name.transposed;
      if (!any) {
        // (Moved, not copied: a large model has tens of thousands.)
        out.push_back(std::move(statement));
        continue;
      }
      std::map<std::string, std::string> temporaries;
      Statement rewritten = deriveStatement(statement, name());
      rewritten.tags = statement.tags;
      rewritten.attributes = statement.attributes;
      rewritten.rhs = statement.rhs;
      for (const Name &source : statement.lhs) {
        if (!source.transposed) {
          rewritten.lhs.push_back(source);
          continue;
        }
        std::string key = (source.quoted ? "`" : "") + source.text;
        auto [it, inserted] = temporaries.emplace(
            key, "transpose." + std::to_string(index) + "." + source.text);
        if (inserted) {
          Statement helper = deriveStatement(statement, name());
          Name plain = source;
          plain.transposed = false;
          helper.lhs.push_back(plain);
          helper.rhs.push_back(makeName(it->second, source.location, true));
          helper.attributes.push_back(
              makeStringAttribute("permute", "[]", source.location));
          out.push_back(std::move(helper));
          // A fused tag on this statement counts the shards of X along the
          // axis the transpose moves the fused one to.
          state.chain.addDerivedName({it->second, true},
                                     {source.text, source.temporary},
                                     {reverseAllAxes(source.location)},
                                     source.text + "^T");
        }
        rewritten.lhs.push_back(makeName(it->second, source.location, true));
      }
      out.push_back(std::move(rewritten));
    }
    state.program.statements = std::move(out);
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    printStatements(state, os);
  }
};

} // namespace

std::unique_ptr<Pass> createLowerTransposeSuffixPass() {
  return std::make_unique<LowerTransposeSuffixPass>();
}

} // namespace aoa
