//===- TokenKinds.cpp ------------------------------------------------------===//
#include "TokenKinds.h"

#include "AOALexer.h"

namespace aoa {

using L = grammar::AOALexer;

namespace {
struct KindPair {
  size_t antlr;
  TokenKind kind;
};
constexpr KindPair kPairs[] = {
    {L::ARROW, TokenKind::Arrow},
    {L::EQUAL, TokenKind::Equal},
    {L::COLON, TokenKind::Colon},
    {L::LBRACKET, TokenKind::LBracket},
    {L::RBRACKET, TokenKind::RBracket},
    {L::COMMA, TokenKind::Comma},
    {L::SEMI, TokenKind::Semi},
    {L::TRANSPOSE, TokenKind::Transpose},
    {L::NUMBER, TokenKind::Number},
    {L::STRING, TokenKind::String},
    {L::IDENT, TokenKind::Ident},
    {L::QUOTED_IDENT, TokenKind::QuotedIdent},
    {L::NEWLINE, TokenKind::Newline},
    {L::UNTERMINATED_STRING, TokenKind::UnterminatedString},
    {L::UNTERMINATED_QUOTED_IDENT, TokenKind::UnterminatedQuotedIdent},
    {L::UNEXPECTED_CHAR, TokenKind::UnexpectedChar},
};
} // namespace

TokenKind tokenKindFromAntlr(size_t antlrType) {
  for (const KindPair &pair : kPairs)
    if (pair.antlr == antlrType)
      return pair.kind;
  return TokenKind::UnexpectedChar;
}

size_t antlrTypeFromTokenKind(TokenKind kind) {
  for (const KindPair &pair : kPairs)
    if (pair.kind == kind)
      return pair.antlr;
  return L::UNEXPECTED_CHAR;
}

} // namespace aoa
