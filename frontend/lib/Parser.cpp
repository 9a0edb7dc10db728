//===- Parser.cpp - Statement splitting, syntax errors, driver -------------===//
#include "aoa/frontend/Parser.h"

#include "StatementBuilder.h"
#include "TokenKinds.h"

#include "AOAParser.h"
#include "antlr4-runtime.h"

namespace aoa {

namespace {

const char *kStatementForm =
    "a statement maps sources to destinations, e.g. `a -> b`, "
    "`a, b -> c, axis=1` or `a -> b, permute='[1, 0]'`";

/// The location just after the last token of a statement, where a missing
/// piece would go.
SourceLocation endOfStatement(const std::vector<Token> &tokens) {
  const Token &last = tokens.back();
  SourceLocation loc = last.location;
  loc.column += static_cast<uint32_t>(countCodePoints(last.text));
  return loc;
}

std::string describeToken(const std::vector<Token> &tokens, size_t index) {
  if (index >= tokens.size())
    return "end of statement";
  const Token &t = tokens[index];
  switch (t.kind) {
  case TokenKind::Ident:
    return "name '" + t.text + "'";
  case TokenKind::QuotedIdent:
    return "name " + t.text;
  case TokenKind::Number:
    return "number " + t.text;
  case TokenKind::String:
    return "string " + t.text;
  default:
    return "'" + t.text + "'";
  }
}

/// Reports the first lexical error of a statement. Returns true if there was
/// one.
bool reportLexicalError(const std::vector<Token> &tokens,
                        DiagnosticEngine &diags) {
  const Token *previous = nullptr;
  for (const Token &t : tokens) {
    // `layer-0.w` lexes as IDENT NUMBER(-0) ...: a '-' glued to a name or a
    // value is part of a key, not the sign of a number.
    if (t.kind == TokenKind::Number && t.text[0] == '-' && previous &&
        (previous->kind == TokenKind::Ident ||
         previous->kind == TokenKind::QuotedIdent ||
         previous->kind == TokenKind::Number ||
         previous->kind == TokenKind::String ||
         previous->kind == TokenKind::RBracket ||
         previous->kind == TokenKind::Transpose) &&
        previous->location.line == t.location.line &&
        previous->location.column + countCodePoints(previous->text) ==
            t.location.column) {
      diags.error(t.location, "unexpected character '-'")
          .hint("'-' only appears in '->' and before a number; write keys "
                "containing '-' in backquotes, e.g. `layer-0.w`");
      return true;
    }
    previous = &t;
    switch (t.kind) {
    case TokenKind::UnterminatedString:
      diags.error(t.location, "unterminated string")
          .hint(std::string("close the string with ") + t.text[0] +
                " on the same line");
      return true;
    case TokenKind::UnterminatedQuotedIdent:
      diags.error(t.location, t.text.size() > 1 ? "unterminated backquoted name"
                                                : "empty or unterminated "
                                                  "backquoted name")
          .hint("write keys the plain syntax cannot spell in backquotes, "
                "e.g. `model/layer-0.w`");
      return true;
    case TokenKind::InvalidUtf8:
      diags.error(t.location, "invalid UTF-8 (byte " + t.text + ")")
          .hint("configs must be UTF-8 text");
      return true;
    case TokenKind::UnexpectedChar: {
      auto d = diags.error(t.location, "unexpected character '" + t.text + "'");
      if (t.text == "-")
        d.hint("'-' only appears in '->' and before a number; write keys "
               "containing '-' in backquotes, e.g. `layer-0.w`");
      else if (t.text == "^")
        d.hint("'^' only appears in the '^T' (transpose) suffix");
      else if (t.text == "<")
        d.hint("the arrow is '->' with the sources on its left; the old "
               "`dst <- src` form is not supported");
      else if (t.text == "$")
        d.hint("placeholders such as $LAYER_ID appear inside names, e.g. "
               "layers.$LAYER_ID.w");
      else if (t.text == "*")
        d.hint("'*' appears inside names, e.g. experts.*.weight");
      else
        d.hint("names are made of letters, digits, '.', '_', '$' and '*' "
               "(starting with a letter or '_'); write other keys in "
               "backquotes, e.g. `model/layer-0.w`");
      return true;
    }
    default:
      break;
    }
  }
  return false;
}

/// Arrow checks before the grammar runs: they give the clearest messages for
/// the most common mistakes.
bool reportArrowError(const std::vector<Token> &tokens,
                      DiagnosticEngine &diags) {
  std::vector<size_t> arrows;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i].kind == TokenKind::Arrow)
      arrows.push_back(i);
  if (arrows.empty()) {
    diags.error(tokens.front().location, "statement has no '->'")
        .hint(kStatementForm);
    return true;
  }
  if (arrows.size() > 1) {
    diags.error(tokens[arrows[1]].location, "statement has more than one '->'")
        .note(tokens[arrows[0]].location, "first '->' is here")
        .hint("separate statements with a newline or ';'");
    return true;
  }
  if (arrows[0] == 0) {
    diags.error(tokens[0].location, "missing source names before '->'")
        .hint("write `_ -> b` to add a key that the source does not have");
    return true;
  }
  if (arrows[0] + 1 == tokens.size()) {
    diags.error(endOfStatement(tokens), "missing destination names after '->'")
        .hint("write `a -> _` to remove a source key");
    return true;
  }
  return false;
}

/// Records the first syntax error ANTLR finds, with what it expected.
class FirstSyntaxError : public antlr4::BaseErrorListener {
public:
  bool seen = false;
  size_t tokenIndex = 0;
  size_t ruleIndex = static_cast<size_t>(-1);
  std::vector<size_t> expected;

  void syntaxError(antlr4::Recognizer *recognizer, antlr4::Token *offending,
                   size_t, size_t, const std::string &,
                   std::exception_ptr) override {
    if (seen)
      return;
    seen = true;
    tokenIndex = offending ? offending->getTokenIndex() : 0;
    auto *parser = dynamic_cast<antlr4::Parser *>(recognizer);
    if (!parser)
      return;
    if (antlr4::ParserRuleContext *context = parser->getContext())
      ruleIndex = context->getRuleIndex();
    try {
      for (ssize_t type : parser->getExpectedTokens().toList())
        expected.push_back(static_cast<size_t>(type));
    } catch (...) {
      expected.clear(); // the message is still useful without the set
    }
    // The error is found after the parser left a `(',' x)*` loop (before
    // '->' or at the end of the statement), so the set lacks the ',' that
    // would have continued the list.
    using P = grammar::AOAParser;
    bool afterList = ruleIndex == P::RuleStatementOnly;
    for (size_t e : expected)
      afterList |= ruleIndex == P::RuleStatement && e == P::ARROW;
    if (afterList)
      expected.push_back(P::COMMA);
  }
};

/// Reports the first error through the listeners, then stops the parse:
/// each statement is parsed on its own, so there is nothing to recover into,
/// and ANTLR's token-insertion recovery needs a token source we do not have.
class ReportAndBail : public antlr4::DefaultErrorStrategy {
public:
  void recover(antlr4::Parser *, std::exception_ptr) override {
    throw antlr4::ParseCancellationException();
  }
  antlr4::Token *recoverInline(antlr4::Parser *parser) override {
    antlr4::InputMismatchException error(parser);
    reportError(parser, error);
    throw antlr4::ParseCancellationException();
  }
  void sync(antlr4::Parser *) override {}
};

std::string describeExpected(const std::vector<size_t> &expected) {
  using P = grammar::AOAParser;
  // A fixed order keeps messages stable.
  const std::pair<size_t, const char *> order[] = {
      {P::IDENT, "a name"},        {P::QUOTED_IDENT, "a name"},
      {P::ARROW, "'->'"},          {P::COMMA, "','"},
      {P::EQUAL, "'='"},           {P::LBRACKET, "'['"},
      {P::COLON, "':'"},           {P::RBRACKET, "']'"},
      {P::TRANSPOSE, "'^T'"},      {P::NUMBER, "a number"},
      {P::STRING, "a string"},     {antlr4::Token::EOF, "end of statement"}};
  std::vector<std::string> words;
  for (const auto &[type, word] : order) {
    bool wanted = false;
    for (size_t e : expected)
      wanted |= e == type;
    if (wanted && (words.empty() || words.back() != word))
      words.push_back(word);
  }
  if (words.empty())
    return "something else";
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i)
      out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

void reportSyntaxError(const FirstSyntaxError &error,
                       const std::vector<Token> &tokens,
                       DiagnosticEngine &diags) {
  using P = grammar::AOAParser;
  SourceLocation loc = error.tokenIndex < tokens.size()
                           ? tokens[error.tokenIndex].location
                           : endOfStatement(tokens);
  std::string found = describeToken(tokens, error.tokenIndex);
  const Token *previous =
      error.tokenIndex > 0 && error.tokenIndex <= tokens.size()
          ? &tokens[error.tokenIndex - 1]
          : nullptr;

  if (error.ruleIndex == P::RuleAttributeValue ||
      (previous && previous->kind == TokenKind::Equal)) {
    bool list = error.tokenIndex < tokens.size() &&
                tokens[error.tokenIndex].kind == TokenKind::LBracket;
    diags
        .error(loc, "malformed attribute: expected a number or a string after "
                    "'=', found " + found)
        .hint(list ? "lists are written as strings, e.g. permute='[1, 0]'"
                   : "attributes are written key=NUMBER or key='text', e.g. "
                     "axis=1 or dtype='float32'");
    return;
  }
  if (error.ruleIndex == P::RuleRange) {
    diags.error(loc, "malformed range: expected `name[begin:end]` with two "
                     "integers, found " + found)
        .hint("q[0:3] stands for the names q_0, q_1, q_2");
    return;
  }
  auto d = diags.error(loc, "expected " + describeExpected(error.expected) +
                                ", found " + found);
  if (error.tokenIndex < tokens.size()) {
    TokenKind kind = tokens[error.tokenIndex].kind;
    if ((kind == TokenKind::Number || kind == TokenKind::String) && previous &&
        (previous->kind == TokenKind::Ident))
      d.hint("attributes are written key=value, e.g. axis=1");
    else if (kind == TokenKind::Ident || kind == TokenKind::QuotedIdent)
      d.hint("separate names with ',' and statements with a newline or ';'");
    else if (kind == TokenKind::Equal)
      d.hint("attributes follow the destination names: `a -> b, axis=1`");
    else
      d.hint(kStatementForm);
  } else {
    d.hint(kStatementForm);
  }
}

/// Parses one statement's tokens with the generated parser. Returns the AST,
/// or nullopt after reporting the first problem.
std::optional<Statement> parseOne(const std::vector<Token> &tokens,
                                  DiagnosticEngine &diags) {
  if (reportLexicalError(tokens, diags) || reportArrowError(tokens, diags))
    return std::nullopt;

  std::vector<std::unique_ptr<antlr4::Token>> antlrTokens;
  antlrTokens.reserve(tokens.size());
  for (const Token &t : tokens) {
    auto token = std::make_unique<antlr4::CommonToken>(
        antlrTypeFromTokenKind(t.kind), t.text);
    token->setLine(t.location.line);
    token->setCharPositionInLine(t.location.column - 1);
    antlrTokens.push_back(std::move(token));
  }
  antlr4::ListTokenSource source(std::move(antlrTokens));
  antlr4::CommonTokenStream stream(&source);
  grammar::AOAParser parser(&stream);
  parser.removeErrorListeners();
  FirstSyntaxError listener;
  parser.addErrorListener(&listener);
  parser.setErrorHandler(std::make_shared<ReportAndBail>());

  grammar::AOAParser::StatementOnlyContext *tree = nullptr;
  try {
    tree = parser.statementOnly();
  } catch (const antlr4::ParseCancellationException &) {
    // The listener holds the error.
  }
  if (listener.seen || !tree) {
    reportSyntaxError(listener, tokens, diags);
    return std::nullopt;
  }
  return buildStatement(tree->statement(), tokens, diags);
}

} // namespace

bool parseStatements(uint32_t buffer, const SourceManager &sources,
                     DiagnosticEngine &diags, std::vector<Statement> &out) {
  bool ok = true;
  for (StatementTokens &statement :
       splitStatements(lexBuffer(sources, buffer))) {
    std::optional<Statement> parsed = parseOne(statement.tokens, diags);
    if (!parsed || !verifyStatement(*parsed, diags)) {
      ok = false;
      continue;
    }
    out.push_back(std::move(*parsed));
  }
  return ok;
}

std::optional<Program> parseConfig(const ConfigFile &config,
                                   const SourceManager &sources,
                                   DiagnosticEngine &diags, bool allowEmpty) {
  Program program;
  program.reverse = config.reverse;
  program.enableTraceback = config.enableTraceback;
  bool ok = true;
  for (uint32_t buffer : config.statementBuffers)
    ok &= parseStatements(buffer, sources, diags, program.statements);
  if (ok && program.statements.empty() && !allowEmpty) {
    SourceLocation where{config.fileBuffer, 1, 1};
    if (config.isJson) {
      size_t at = sources.text(config.fileBuffer).find("\"aoa_statements\"");
      if (at != std::string_view::npos)
        where = sources.locationForOffset(config.fileBuffer, at);
    }
    diags.error(where, "config has no statements")
        .hint(config.isJson ? "list statements under \"aoa_statements\", e.g. "
                              "{\"aoa_statements\": [\"a -> b\"]}"
                            : "write one statement per line, e.g. `a -> b`");
    ok = false;
  }
  if (!ok)
    return std::nullopt;
  return program;
}

} // namespace aoa
