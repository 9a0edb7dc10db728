//===- Parser.h - From configs to AST programs ------------------*- C++ -*-===//
//
// Statements are lexed, split at separators and parsed one at a time, so a
// malformed statement is reported and the next one is still checked. Every
// problem is a located diagnostic with a hint; nothing the user writes can
// crash the parser.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FRONTEND_PARSER_H
#define AOA_FRONTEND_PARSER_H

#include "aoa/frontend/ConfigLoader.h"
#include "aoa/ir/AST.h"
#include "aoa/ir/Diagnostics.h"

#include <optional>
#include <vector>

namespace aoa {

/// Parses the statements of one buffer, appending them to `out`. Returns
/// false if any statement had an error (all of them are reported).
bool parseStatements(uint32_t buffer, const SourceManager &sources,
                     DiagnosticEngine &diags, std::vector<Statement> &out);

/// Parses every statement of a loaded config into a Program. Reports every
/// error it finds and returns nullopt if there was any, including a config
/// with no statements at all unless `allowEmpty` (a pure re-layout: with
/// metadata, every key maps to itself).
std::optional<Program> parseConfig(const ConfigFile &config,
                                   const SourceManager &sources,
                                   DiagnosticEngine &diags,
                                   bool allowEmpty = false);

} // namespace aoa

#endif // AOA_FRONTEND_PARSER_H
