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

void printStatements(const CompilationState &state, std::ostream &os) {
  for (const Statement &statement : state.program.statements) {
    const SourceLocation &loc = statement.location;
    if (loc.isValid()) {
      const std::string &sub = state.sources.subPath(loc.buffer);
      os << (sub.empty() ? "" : sub + ":") << loc.line << ":" << loc.column
         << ": ";
    }
    os << printStatement(statement) << '\n';
  }
}

} // namespace aoa
