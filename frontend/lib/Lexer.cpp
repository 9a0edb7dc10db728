//===- Lexer.cpp - ANTLR lexer adapter -------------------------------------===//
#include "aoa/frontend/Lexer.h"

#include "AOALexer.h"
#include "antlr4-runtime.h"

#include "TokenKinds.h"

#include <algorithm>

namespace aoa {

const char *tokenKindName(TokenKind kind) {
  switch (kind) {
  case TokenKind::Arrow:
    return "ARROW";
  case TokenKind::Equal:
    return "EQUAL";
  case TokenKind::Colon:
    return "COLON";
  case TokenKind::LBracket:
    return "LBRACKET";
  case TokenKind::RBracket:
    return "RBRACKET";
  case TokenKind::Comma:
    return "COMMA";
  case TokenKind::Semi:
    return "SEMI";
  case TokenKind::Transpose:
    return "TRANSPOSE";
  case TokenKind::Number:
    return "NUMBER";
  case TokenKind::String:
    return "STRING";
  case TokenKind::Ident:
    return "IDENT";
  case TokenKind::QuotedIdent:
    return "QUOTED_IDENT";
  case TokenKind::Newline:
    return "NEWLINE";
  case TokenKind::UnterminatedString:
    return "UNTERMINATED_STRING";
  case TokenKind::UnterminatedQuotedIdent:
    return "UNTERMINATED_QUOTED_IDENT";
  case TokenKind::UnexpectedChar:
    return "UNEXPECTED_CHAR";
  case TokenKind::InvalidUtf8:
    return "INVALID_UTF8";
  }
  return "UNKNOWN";
}

bool isErrorToken(TokenKind kind) {
  return kind == TokenKind::UnterminatedString ||
         kind == TokenKind::UnterminatedQuotedIdent ||
         kind == TokenKind::UnexpectedChar || kind == TokenKind::InvalidUtf8;
}

bool isSeparator(TokenKind kind) {
  return kind == TokenKind::Newline || kind == TokenKind::Semi;
}

namespace {

/// Offset of the first byte that does not start or continue a valid UTF-8
/// sequence, or npos. The ANTLR runtime throws on invalid UTF-8, so the
/// lexer must never see it.
size_t findInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3
                                  : (c >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > s.size())
      return i;
    for (size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
        return i;
    // Overlong forms and surrogates are rejected by the runtime too.
    if (length == 2 && c < 0xC2)
      return i;
    if (length == 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))
        return i;
    }
    if (length == 4) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xF0 && c1 < 0x90) || c > 0xF4 || (c == 0xF4 && c1 >= 0x90))
        return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

} // namespace

std::vector<Token> lexBuffer(const SourceManager &sources, uint32_t buffer) {
  std::string_view text = sources.text(buffer);
  std::vector<Token> tokens;
  size_t bad = findInvalidUtf8(text);
  if (bad != std::string_view::npos) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x",
                  static_cast<unsigned char>(text[bad]));
    tokens.push_back(Token{TokenKind::InvalidUtf8, hex,
                           sources.locationForOffset(buffer, bad)});
    return tokens;
  }

  // ANTLR counts lines at '\n' only, while a lone '\r' also ends a line (for
  // the grammar and the SourceManager alike), so locations are computed from
  // the token's offset instead. The input stream indexes code points.
  std::vector<size_t> byteOffsets; // code point index -> byte offset
  byteOffsets.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
      byteOffsets.push_back(i);
  byteOffsets.push_back(text.size());

  antlr4::ANTLRInputStream input(text.data(), text.size());
  grammar::AOALexer lexer(&input);
  lexer.removeErrorListeners();
  for (;;) {
    std::unique_ptr<antlr4::Token> t = lexer.nextToken();
    if (t->getType() == antlr4::Token::EOF)
      break;
    size_t start = std::min(t->getStartIndex(), byteOffsets.size() - 1);
    tokens.push_back(Token{
        tokenKindFromAntlr(t->getType()), t->getText(),
        sources.locationForOffset(buffer, byteOffsets[start])});
  }
  return tokens;
}

std::vector<StatementTokens> splitStatements(std::vector<Token> tokens) {
  std::vector<StatementTokens> statements;
  StatementTokens current;
  for (Token &token : tokens) {
    if (isSeparator(token.kind)) {
      if (!current.tokens.empty())
        statements.push_back(std::move(current));
      current = StatementTokens();
      continue;
    }
    current.tokens.push_back(std::move(token));
  }
  if (!current.tokens.empty())
    statements.push_back(std::move(current));
  return statements;
}

} // namespace aoa
