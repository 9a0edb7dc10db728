//===- Printers.h - Stable text forms of tokens and ASTs --------*- C++ -*-===//
//
// `aoa-compile --emit=tokens` and `--emit=ast` print these forms; lit tests
// check them, so they only change on purpose. Locations are printed without
// the file path (`12:5`, or `aoa_statements[3]:1:5` in JSON configs).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FRONTEND_PRINTERS_H
#define AOA_FRONTEND_PRINTERS_H

#include "aoa/frontend/ConfigLoader.h"
#include "aoa/ir/AST.h"

#include <iosfwd>

namespace aoa {

/// A location relative to its file: `line:col` or `subPath:line:col`.
std::string describeWithinFile(const SourceManager &sources, SourceLocation loc);

/// One line per statement: its location, then each token as KIND or
/// KIND:text, e.g. `2:1: IDENT:a ARROW IDENT:b COMMA IDENT:axis EQUAL NUMBER:1`.
/// Reports lexical errors to `diags`; returns false if there were any.
bool printTokens(std::ostream &os, const ConfigFile &config,
                 const SourceManager &sources, DiagnosticEngine &diags);

/// A `Program(...)` header line, then one indented line per statement with
/// its location and printStatement() form.
void printProgram(std::ostream &os, const Program &program,
                  const SourceManager &sources);

} // namespace aoa

#endif // AOA_FRONTEND_PRINTERS_H
