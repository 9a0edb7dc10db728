//===- BuildOps.cpp - Statements to primitive ops --------------------------===//
//
// Every statement left after the macro passes becomes one op (a 1 -> 1
// statement with several of permute / dtype / reshape becomes a chain of ops
// through temporaries, in the order the attributes are written). In reverse
// mode the statements run backwards with their sides swapped: permutations
// are inverted, `src_dtype`/`dst_dtype` cast to `src_dtype`, `A -> _` adds A
// and `_ -> B` removes B (reference §9).
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/ir/IntegerList.h"
#include "aoa/passes/CompilationState.h"

#include <algorithm>
#include <ostream>

namespace aoa {

namespace {

ValueName valueNameOf(const Name &name) { return {name.text, name.temporary}; }

class OpBuilder {
public:
  OpBuilder(CompilationState &state) : state_(state) {}

  void build() {
    const std::vector<Statement> &statements = state_.program.statements;
    bool reverse = state_.program.reverse;
    for (size_t k = 0; k < statements.size(); ++k) {
      size_t index = reverse ? statements.size() - 1 - k : k;
      buildStatement(index, statements[index], reverse);
    }
  }

private:
  InFlightDiagnostic error(const Statement &statement, SourceLocation location,
                           std::string message) {
    return reportAt(state_, statement, location, std::move(message));
  }

  static void addOperand(Op &op, const Name &name) {
    op.operands.push_back(valueNameOf(name));
    op.operandLocations.push_back(name.location);
  }
  static void addResult(Op &op, const Name &name) {
    op.results.push_back(valueNameOf(name));
    op.resultLocations.push_back(name.location);
  }

  Op makeOp(OpKind kind, size_t index, const Statement &statement) {
    Op op;
    op.kind = kind;
    op.statement = index;
    op.location = statement.location;
    op.attributeLocation = statement.location;
    return op;
  }

  void buildStatement(size_t index, const Statement &statement, bool reverse) {
    const std::vector<Name> &from = reverse ? statement.rhs : statement.lhs;
    const std::vector<Name> &to = reverse ? statement.lhs : statement.rhs;
    if (from.empty() || to.empty())
      return; // the frontend reported it
    if (from.size() > 1 || to.size() > 1)
      return buildSplitOrConcat(index, statement, from, to);
    if (to[0].isPlaceholder() || from[0].isPlaceholder()) {
      bool adds = from[0].isPlaceholder();
      Op op = makeOp(adds ? OpKind::Add : OpKind::Remove, index, statement);
      const Name &name = adds ? to[0] : from[0];
      (adds ? op.results : op.operands).push_back(valueNameOf(name));
      (adds ? op.resultLocations : op.operandLocations).push_back(name.location);
      state_.ops.push_back(std::move(op));
      return;
    }
    buildOneToOne(index, statement, from[0], to[0], reverse);
  }

  void buildSplitOrConcat(size_t index, const Statement &statement,
                          const std::vector<Name> &from,
                          const std::vector<Name> &to) {
    bool split = to.size() > 1;
    const Attribute *axis = statement.findAttribute("axis");
    if (!axis || statement.attributes.size() != 1) {
      auto d = error(statement, statement.arrowLocation,
                     std::string(split ? "a split" : "a concat") +
                         " takes exactly one attribute, 'axis'");
      for (const Attribute &a : statement.attributes)
        if (a.key != "axis")
          d.note(a.location, "'" + a.key + "' given here");
      d.hint(split ? "write `a -> b, c, axis=0`" : "write `a, b -> c, axis=0`");
      return;
    }
    if (!axis->isInteger())
      return; // the frontend reported it
    Op op = makeOp(split ? OpKind::Split : OpKind::Concat, index, statement);
    op.axis = axis->integer();
    op.attributeLocation = axis->valueLocation;
    // (A fused statement's split or concat has a name per piece.)
    op.operands.reserve(from.size());
    op.operandLocations.reserve(from.size());
    op.results.reserve(to.size());
    op.resultLocations.reserve(to.size());
    for (const Name &name : from)
      addOperand(op, name);
    for (const Name &name : to)
      addResult(op, name);
    state_.ops.push_back(std::move(op));
  }

  void buildOneToOne(size_t index, const Statement &statement, const Name &from,
                     const Name &to, bool reverse) {
    if (statement.attributes.empty()) {
      Op op = makeOp(OpKind::Rename, index, statement);
      addOperand(op, from);
      addResult(op, to);
      state_.ops.push_back(std::move(op));
      return;
    }
    if (const Attribute *axis = statement.findAttribute("axis")) {
      if (statement.attributes.size() != 1) {
        error(statement, axis->location,
              "'axis' on a 1 -> 1 statement makes an alias and takes no other "
              "attributes")
            .hint("drop 'axis', or write the alias and the transform as two "
                  "statements");
        return;
      }
      Op op = makeOp(OpKind::Alias, index, statement);
      op.axis = axis->isInteger() ? axis->integer() : 0;
      op.attributeLocation = axis->location;
      addOperand(op, from);
      addResult(op, to);
      state_.ops.push_back(std::move(op));
      return;
    }
    // One op per transform, in the written order (reversed in reverse mode),
    // chained through temporaries.
    std::vector<Op> chain;
    for (const Attribute &a : statement.attributes) {
      if (a.key == "dst_dtype")
        continue; // handled with src_dtype
      std::optional<Op> op = transformOp(index, statement, a, reverse);
      if (!op)
        return;
      chain.push_back(std::move(*op));
    }
    if (reverse)
      std::reverse(chain.begin(), chain.end());
    ValueName current = valueNameOf(from);
    SourceLocation currentLocation = from.location;
    for (size_t i = 0; i < chain.size(); ++i) {
      chain[i].operands.push_back(current);
      chain[i].operandLocations.push_back(currentLocation);
      bool last = i + 1 == chain.size();
      current = last ? valueNameOf(to)
                     : ValueName{"chain." + std::to_string(index + 1) + "." +
                                     std::to_string(i),
                                 true};
      currentLocation = last ? to.location : chain[i].attributeLocation;
      chain[i].results.push_back(current);
      chain[i].resultLocations.push_back(currentLocation);
      state_.ops.push_back(std::move(chain[i]));
    }
  }

  std::optional<DType> castDType(const Statement &statement,
                                 const Attribute &a) {
    if (!a.isString())
      return std::nullopt;
    std::optional<DType> dtype = parseDTypeName(a.string());
    if (!dtype) {
      error(statement, a.valueLocation,
            "unsupported cast dtype '" + a.string() + "'")
          .hint("casts go between " + std::string(castableDTypeNames()));
      return std::nullopt;
    }
    if (!isCastableDType(*dtype)) {
      error(statement, a.valueLocation,
            "cannot cast to or from " + a.string() + ": " + a.string() +
                " is only moved, never cast")
          .hint("float8_e4m3fnuz, float8_e5m2fnuz and complex64 are copied "
                "unchanged; casts go between " +
                std::string(castableDTypeNames()));
      return std::nullopt;
    }
    return dtype;
  }

  std::optional<Op> transformOp(size_t index, const Statement &statement,
                                const Attribute &a, bool reverse) {
    if (!a.isString())
      return std::nullopt; // the frontend reported it
    if (a.key == "permute") {
      Op op = makeOp(OpKind::Permute, index, statement);
      op.permutation = a.string();
      op.invertPermutation = reverse;
      op.attributeLocation = a.valueLocation;
      return op;
    }
    if (a.key == "dtype") {
      if (reverse) {
        error(statement, a.location,
              "'dtype' cannot run in reverse: the dtype to go back to is "
              "unknown")
            .hint("write src_dtype='…', dst_dtype='" + a.string() +
                  "' so that --reverse can cast back to src_dtype");
        return std::nullopt;
      }
      std::optional<DType> dtype = castDType(statement, a);
      if (!dtype)
        return std::nullopt;
      Op op = makeOp(OpKind::Cast, index, statement);
      op.castTo = *dtype;
      op.attributeLocation = a.valueLocation;
      return op;
    }
    if (a.key == "src_dtype") {
      const Attribute *dst = statement.findAttribute("dst_dtype");
      if (!dst)
        return std::nullopt; // the frontend reported it
      std::optional<DType> srcType = castDType(statement, a);
      std::optional<DType> dstType = castDType(statement, *dst);
      if (!srcType || !dstType)
        return std::nullopt;
      Op op = makeOp(OpKind::Cast, index, statement);
      op.castTo = reverse ? *srcType : *dstType;
      op.attributeLocation = reverse ? a.valueLocation : dst->valueLocation;
      return op;
    }
    if (a.key == "reshape") {
      std::optional<std::vector<int64_t>> shape = parseIntegerList(a.string());
      bool positive = shape && std::all_of(shape->begin(), shape->end(),
                                           [](int64_t v) { return v > 0; });
      if (!shape || shape->size() < 3 || !positive) {
        error(statement, a.valueLocation,
              "reshape takes the canonical shape [c0, c1, r...] with at least "
              "3 positive dimensions, not '" + a.string() + "'")
            .hint("reshape='[4, 2, 3]' converts between (8, 3) and (4, 2, 3)");
        return std::nullopt;
      }
      Op op = makeOp(OpKind::Reshape, index, statement);
      op.canonicalShape = *shape;
      op.attributeLocation = a.valueLocation;
      return op;
    }
    error(statement, a.location,
          "attribute '" + a.key + "' has no meaning on a 1 -> 1 statement")
        .hint("1 -> 1 statements take permute, dtype, src_dtype/dst_dtype, "
              "reshape, or axis (an alias)");
    return std::nullopt;
  }

  CompilationState &state_;
};

class BuildOpsPass : public Pass {
public:
  const char *name() const override { return "build-ops"; }
  const char *description() const override {
    return "turn statements into primitive ops (reverse mode: backwards)";
  }
  bool run(CompilationState &state) override {
    state.ops.clear();
    state.ops.reserve(state.program.statements.size()); // most make one op
    OpBuilder(state).build();
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    printOps(state, os);
  }
};

} // namespace

std::unique_ptr<Pass> createBuildOpsPass() {
  return std::make_unique<BuildOpsPass>();
}

} // namespace aoa
