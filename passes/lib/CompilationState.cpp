//===- CompilationState.cpp ------------------------------------------------===//
#include "aoa/passes/CompilationState.h"

#include <ostream>

namespace aoa {

InFlightDiagnostic reportAt(CompilationState &state, const Statement &statement,
                            SourceLocation location, std::string message) {
  InFlightDiagnostic d = state.diags.error(location, std::move(message));
  if (state.program.enableTraceback)
    for (auto step = statement.expansion.rbegin();
         step != statement.expansion.rend(); ++step)
      d.note(step->fromLocation,
             "in a statement expanded by " + step->pass + " from " +
                 step->fromText);
  return d;
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
