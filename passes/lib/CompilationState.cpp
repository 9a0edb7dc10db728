//===- CompilationState.cpp ------------------------------------------------===//
#include "aoa/passes/CompilationState.h"

#include <ostream>

namespace aoa {

InFlightDiagnostic reportAt(CompilationState &state, const Statement &statement,
                            SourceLocation location, std::string message) {
  return reportAt(state, statement.expansion, location, std::move(message));
}

InFlightDiagnostic reportAt(CompilationState &state,
                            llvm::ArrayRef<ExpansionStep> expansion,
                            SourceLocation location, std::string message) {
  InFlightDiagnostic d = state.diags.error(location, std::move(message));
  if (state.program.enableTraceback)
    for (auto step = expansion.rbegin(); step != expansion.rend(); ++step)
      d.note(step->fromLocation,
             "in a statement expanded by " + step->pass + " from " +
                 step->fromText);
  return d;
}

InFlightDiagnostic reportAtOp(CompilationState &state, size_t op,
                              const std::string &name, std::string message) {
  if (op >= state.ops.size()) // no statement: point at the key's metadata
    return state.diags.error(state.locateMetadataKey
                                 ? state.locateMetadataKey(true, name)
                                 : SourceLocation{},
                             std::move(message));
  const Op &producer = state.ops[op];
  SourceLocation at = producer.location;
  for (size_t i = 0; i < producer.results.size(); ++i)
    if (!producer.results[i].temporary && producer.results[i].text == name &&
        i < producer.resultLocations.size())
      at = producer.resultLocations[i];
  llvm::ArrayRef<ExpansionStep> expansion;
  if (producer.statement < state.program.statements.size())
    expansion = state.program.statements[producer.statement].expansion;
  else if (producer.statement < state.releasedExpansions.size())
    expansion = state.releasedExpansions[producer.statement];
  return reportAt(state, expansion, at, std::move(message));
}

void releaseStatements(CompilationState &state) {
  std::vector<Statement> statements = std::move(state.program.statements);
  state.program.statements.clear();
  state.releasedExpansions.resize(statements.size());
  for (size_t i = 0; i < statements.size(); ++i)
    state.releasedExpansions[i] = std::move(statements[i].expansion);
  state.chain = VarMappingChain();
}

std::string spellCast(const CompilationState &state, DType to, DType from) {
  if (!state.program.reverse)
    return "dtype='" + std::string(dtypeName(to)) + "'";
  // --reverse runs statements backwards and casts to src_dtype.
  return "src_dtype='" + std::string(dtypeName(to)) + "', dst_dtype='" +
         std::string(dtypeName(from)) + "'";
}

namespace {

/// `aoa_statements[3]:1:1: ` (JSON) or `12:1: ` (.aoa): where a line of a
/// printout comes from, without the file name so that outputs compare
/// across machines.
void printLocationPrefix(const CompilationState &state, SourceLocation loc,
                         std::ostream &os) {
  if (!loc.isValid())
    return;
  const std::string &sub = state.sources.subPath(loc.buffer);
  os << (sub.empty() ? "" : sub + ":") << loc.line << ":" << loc.column << ": ";
}

} // namespace

void printStatements(const CompilationState &state, std::ostream &os) {
  for (const Statement &statement : state.program.statements) {
    printLocationPrefix(state, statement.location, os);
    os << printStatement(statement) << '\n';
  }
}

void printOps(const CompilationState &state, std::ostream &os) {
  for (const Op &op : state.ops) {
    printLocationPrefix(state, op.location, os);
    printOp(op, os);
    os << '\n';
  }
}

} // namespace aoa
