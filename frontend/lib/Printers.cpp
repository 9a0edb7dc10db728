//===- Printers.cpp --------------------------------------------------------===//
#include "aoa/frontend/Printers.h"

#include "aoa/frontend/Lexer.h"

#include <ostream>

namespace aoa {

std::string describeWithinFile(const SourceManager &sources,
                               SourceLocation loc) {
  if (!loc.isValid())
    return "<unknown>";
  std::string out;
  if (!sources.subPath(loc.buffer).empty())
    out = sources.subPath(loc.buffer) + ":";
  return out + std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

bool printTokens(std::ostream &os, const ConfigFile &config,
                 const SourceManager &sources, DiagnosticEngine &diags) {
  bool ok = true;
  for (uint32_t buffer : config.statementBuffers) {
    for (const StatementTokens &statement :
         splitStatements(lexBuffer(sources, buffer))) {
      os << describeWithinFile(sources, statement.tokens.front().location)
         << ":";
      for (const Token &token : statement.tokens) {
        os << ' ' << tokenKindName(token.kind);
        switch (token.kind) {
        case TokenKind::Number:
        case TokenKind::String:
        case TokenKind::Ident:
        case TokenKind::QuotedIdent:
        case TokenKind::UnterminatedString:
        case TokenKind::UnterminatedQuotedIdent:
        case TokenKind::UnexpectedChar:
        case TokenKind::InvalidUtf8:
          os << ':' << token.text;
          break;
        default:
          break;
        }
        if (isErrorToken(token.kind)) {
          ok = false;
          diags.error(token.location, std::string("invalid token ") +
                                          tokenKindName(token.kind) + " '" +
                                          token.text + "'");
        }
      }
      os << '\n';
    }
  }
  return ok;
}

void printProgram(std::ostream &os, const Program &program,
                  const SourceManager &sources) {
  os << "Program(statements=" << program.statements.size()
     << ", reverse=" << (program.reverse ? "true" : "false")
     << ", traceback=" << (program.enableTraceback ? "true" : "false")
     << ")\n";
  for (const Statement &statement : program.statements)
    os << "  " << describeWithinFile(sources, statement.location) << ": "
       << printStatement(statement) << '\n';
}

} // namespace aoa
