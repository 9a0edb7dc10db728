//===- StatementBuilder.cpp - Parse tree to AST ----------------------------===//
#include "StatementBuilder.h"

#include <charconv>

namespace aoa {

namespace {

using P = grammar::AOAParser;

class Builder {
public:
  Builder(const std::vector<Token> &tokens, DiagnosticEngine &diags)
      : tokens_(tokens), diags_(diags) {}

  std::optional<Statement> build(P::StatementContext *tree);

private:
  SourceLocation locationOf(antlr4::tree::TerminalNode *node) const {
    size_t index = node->getSymbol()->getTokenIndex();
    return index < tokens_.size() ? tokens_[index].location : SourceLocation{};
  }
  SourceLocation locationOf(antlr4::ParserRuleContext *context) const {
    size_t index = context->getStart()->getTokenIndex();
    return index < tokens_.size() ? tokens_[index].location : SourceLocation{};
  }

  std::optional<int64_t> integer(antlr4::tree::TerminalNode *node);
  std::optional<Name> name(P::NameContext *context);
  std::optional<Attribute> attribute(P::AttributeContext *context);

  const std::vector<Token> &tokens_;
  DiagnosticEngine &diags_;
};

std::optional<int64_t> Builder::integer(antlr4::tree::TerminalNode *node) {
  std::string text = node->getText();
  int64_t value = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    diags_.error(locationOf(node), "integer " + text + " does not fit in 64 bits");
    return std::nullopt;
  }
  return value;
}

std::optional<Name> Builder::name(P::NameContext *context) {
  Name result;
  P::IdentifierContext *identifier = context->identifier();
  result.location = locationOf(identifier);
  if (antlr4::tree::TerminalNode *quoted = identifier->QUOTED_IDENT()) {
    std::string text = quoted->getText();
    result.text = text.substr(1, text.size() - 2);
    result.quoted = true;
  } else {
    result.text = identifier->IDENT()->getText();
  }
  if (P::RangeContext *range = context->range()) {
    std::optional<int64_t> begin = integer(range->NUMBER(0));
    std::optional<int64_t> end = integer(range->NUMBER(1));
    if (!begin || !end)
      return std::nullopt;
    result.range = NameRange{*begin, *end, locationOf(range)};
  }
  result.transposed = context->TRANSPOSE() != nullptr;
  return result;
}

std::optional<Attribute> Builder::attribute(P::AttributeContext *context) {
  Attribute result;
  P::IdentifierContext *key = context->identifier();
  result.location = locationOf(key);
  if (antlr4::tree::TerminalNode *quoted = key->QUOTED_IDENT()) {
    std::string text = quoted->getText();
    result.key = text.substr(1, text.size() - 2);
  } else {
    result.key = key->IDENT()->getText();
  }
  P::AttributeValueContext *value = context->attributeValue();
  result.valueLocation = locationOf(value);
  if (antlr4::tree::TerminalNode *number = value->NUMBER()) {
    std::optional<int64_t> parsed = integer(number);
    if (!parsed)
      return std::nullopt;
    result.value = *parsed;
  } else {
    std::string text = value->STRING()->getText();
    result.quote = text.front();
    result.value = text.substr(1, text.size() - 2);
  }
  return result;
}

std::optional<Statement> Builder::build(P::StatementContext *tree) {
  Statement statement;
  statement.location = locationOf(tree);
  statement.arrowLocation = locationOf(tree->ARROW());
  for (P::NameContext *context : tree->nameList()->name()) {
    std::optional<Name> parsed = name(context);
    if (!parsed)
      return std::nullopt;
    statement.lhs.push_back(std::move(*parsed));
  }
  const Attribute *firstAttribute = nullptr;
  for (P::RhsItemContext *item : tree->rhsItem()) {
    if (P::AttributeContext *context = item->attribute()) {
      std::optional<Attribute> parsed = attribute(context);
      if (!parsed)
        return std::nullopt;
      statement.attributes.push_back(std::move(*parsed));
      firstAttribute = &statement.attributes.front();
      continue;
    }
    std::optional<Name> parsed = name(item->name());
    if (!parsed)
      return std::nullopt;
    std::optional<MacroTag> tag =
        parsed->quoted ? std::nullopt : macroTagFromSpelling(parsed->text);
    if (tag) {
      if (parsed->range || parsed->transposed) {
        diags_.error(parsed->location,
                     std::string("macro tag '") + macroTagSpelling(*tag) +
                         "' cannot take a range or '^T'")
            .hint("write the tag alone after the destination names");
        return std::nullopt;
      }
      statement.tags.push_back(TagUse{*tag, parsed->location});
      continue;
    }
    if (const char *example =
            parsed->quoted ? nullptr : attributeExample(parsed->text)) {
      diags_.error(parsed->location,
                   "attribute '" + parsed->text + "' has no value")
          .hint(std::string("write ") + example +
                "; write a key with this name in backquotes: `" +
                parsed->text + "`");
      return std::nullopt;
    }
    if (firstAttribute || !statement.tags.empty()) {
      auto d = diags_.error(parsed->location,
                            "destination name '" + parsed->text +
                                "' after " +
                                (firstAttribute ? "an attribute"
                                                : "a macro tag"));
      if (firstAttribute)
        d.note(firstAttribute->location, "first attribute is here");
      else
        d.note(statement.tags.front().location, "macro tag is here");
      d.hint("write the destination names first, then macro tags and "
             "attributes; separate statements with a newline or ';'");
      return std::nullopt;
    }
    statement.rhs.push_back(std::move(*parsed));
  }
  return statement;
}

} // namespace

std::optional<Statement> buildStatement(P::StatementContext *tree,
                                        const std::vector<Token> &tokens,
                                        DiagnosticEngine &diags) {
  return Builder(tokens, diags).build(tree);
}

} // namespace aoa
