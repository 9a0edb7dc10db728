//===- StatementBuilder.h - Parse tree to AST ------------------*- C++ -*-===//
#ifndef AOA_FRONTEND_LIB_STATEMENTBUILDER_H
#define AOA_FRONTEND_LIB_STATEMENTBUILDER_H

#include "aoa/frontend/Lexer.h"
#include "aoa/ir/AST.h"
#include "aoa/ir/Diagnostics.h"

#include "AOAParser.h"

#include <optional>

namespace aoa {

/// Turns a syntactically valid parse tree of one statement into a Statement,
/// classifying tags, placeholders and attributes. Reports structural errors
/// (a name after an attribute, a bad range, an integer that does not fit) and
/// returns nullopt after the first one.
std::optional<Statement>
buildStatement(grammar::AOAParser::StatementContext *tree,
               const std::vector<Token> &tokens, DiagnosticEngine &diags);

/// How a known attribute is written (`axis=1`), or nullptr for other words.
const char *attributeExample(const std::string &key);

/// Checks the rules of one statement that need no metadata: arity, `_`,
/// `^T` on the right, attribute keys and value types, macro tags and their
/// attributes. Reports every violation; returns false if there was any.
bool verifyStatement(const Statement &statement, DiagnosticEngine &diags);

} // namespace aoa

#endif
