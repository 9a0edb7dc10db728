//===- Lexer.h - Tokens of AOA statements -----------------------*- C++ -*-===//
//
// A thin layer over the ANTLR-generated lexer (grammar/AOA.g4) that yields our
// own Token values with source locations. The lexer never fails: characters
// outside the language become error tokens that the parser reports.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FRONTEND_LEXER_H
#define AOA_FRONTEND_LEXER_H

#include "aoa/ir/SourceManager.h"

#include <string>
#include <vector>

namespace aoa {

enum class TokenKind {
  Arrow,
  Equal,
  Colon,
  LBracket,
  RBracket,
  Comma,
  Semi,
  Transpose,
  Number,
  String,
  Ident,
  QuotedIdent,
  Newline,
  // Error tokens.
  UnterminatedString,
  UnterminatedQuotedIdent,
  UnexpectedChar,
  InvalidUtf8,
};

/// The stable upper-case name used by `--emit=tokens` (e.g. `IDENT`).
const char *tokenKindName(TokenKind kind);
bool isErrorToken(TokenKind kind);
bool isSeparator(TokenKind kind);

struct Token {
  TokenKind kind;
  std::string text; ///< exactly as written (strings keep their quotes)
  SourceLocation location;
};

/// Tokenizes a whole buffer (skipping blanks and `#` comments). Invalid UTF-8
/// yields a single InvalidUtf8 token at the first bad byte and stops.
std::vector<Token> lexBuffer(const SourceManager &sources, uint32_t buffer);

/// The tokens of one statement: the run between separators (newlines, `;`).
struct StatementTokens {
  std::vector<Token> tokens;
};

/// Groups a token stream into statements; separators are dropped and empty
/// statements (blank lines, `;;`) are skipped.
std::vector<StatementTokens> splitStatements(std::vector<Token> tokens);

} // namespace aoa

#endif // AOA_FRONTEND_LEXER_H
