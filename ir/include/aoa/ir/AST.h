//===- AST.h - AOA statements with source locations --------------*- C++ -*-===//
//
// The frontend parses a config into a Program: an ordered list of Statements,
// each with its left names, right names, macro tags and attributes, every node
// carrying its source location. Macro passes rewrite Programs (never text) and
// record in `expansion` where a generated statement came from.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_AST_H
#define AOA_IR_AST_H

#include "aoa/ir/SharedString.h"
#include "aoa/ir/SourceManager.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace aoa {

/// `name[begin:end]`: the array shorthand for `name_begin, …, name_(end-1)`.
struct NameRange {
  int64_t begin = 0;
  int64_t end = 0;
  SourceLocation location;
};

struct Name {
  std::string text;
  /// Written in backquotes: never a placeholder, tag or attribute word.
  bool quoted = false;
  /// Written with the `^T` suffix (transpose of all axes).
  bool transposed = false;
  /// Made by a macro. Temporaries live in a namespace of their own, so they
  /// can never collide with a real key; they print as `%text`.
  bool temporary = false;
  std::optional<NameRange> range;
  SourceLocation location;

  /// `_`, the add/remove marker.
  bool isPlaceholder() const { return !quoted && !temporary && text == "_"; }
};

enum class MacroTag { FusedQkv, FusedQkvOld, FusedFfn };

const char *macroTagSpelling(MacroTag tag);
/// The tag an unquoted identifier spells, if any.
std::optional<MacroTag> macroTagFromSpelling(const std::string &word);

struct TagUse {
  MacroTag tag;
  SourceLocation location;
};

struct Attribute {
  std::string key;
  /// An integer (NUMBER) or a text (STRING, quotes removed).
  std::variant<int64_t, std::string> value;
  /// The quote character a STRING was written with (' or "), 0 for numbers.
  char quote = 0;
  SourceLocation location;      ///< of the key
  SourceLocation valueLocation; ///< of the value

  bool isInteger() const { return std::holds_alternative<int64_t>(value); }
  bool isString() const { return std::holds_alternative<std::string>(value); }
  int64_t integer() const { return std::get<int64_t>(value); }
  const std::string &string() const { return std::get<std::string>(value); }
};

/// One step of the chain that produced a generated statement: the statement
/// it came from (its printed form and location) and the pass that made it.
/// (The text is shared: every statement a macro makes from one parent, and
/// every statement made from those, carries it.)
struct ExpansionStep {
  std::string pass;
  SharedString fromText;
  SourceLocation fromLocation;
};

struct Statement {
  std::vector<Name> lhs;
  std::vector<Name> rhs;
  std::vector<TagUse> tags;
  std::vector<Attribute> attributes;
  SourceLocation location;      ///< of the first token
  SourceLocation arrowLocation; ///< of `->`
  /// Outermost first: the user's statement, then each macro's output that
  /// led to this one. Empty for statements written by the user.
  std::vector<ExpansionStep> expansion;

  const Attribute *findAttribute(const std::string &key) const;
  bool hasTag(MacroTag tag) const;
};

struct Program {
  std::vector<Statement> statements;
  /// Paddle's `aoa_config_reverse`: run the statements backwards.
  bool reverse = false;
  /// Paddle's `enable_traceback`; we always keep expansion chains, the flag
  /// only controls whether they are printed as notes.
  bool enableTraceback = true;
};

/// The stable one-line text form used by `--emit=ast` and by expansion notes:
/// `Statement([a, b] -> [c], tags=[fused_ffn], attrs=[axis=1])`.
std::string printStatement(const Statement &statement);
/// A name as written: `` `quoted` ``, `name[0:3]`, `w^T`.
std::string printName(const Name &name);
/// An attribute as written, strings in the quote they were written with.
std::string printAttribute(const Attribute &attribute);

} // namespace aoa

#endif // AOA_IR_AST_H
