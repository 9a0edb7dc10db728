//===- KeyPattern.h - Globs and regexes over tensor keys --------*- C++ -*-===//
//
// A layout spec's rules (docs/layouts.md) select tensor keys by pattern. A
// pattern always matches the whole key, and may capture a layer id and an
// expert id, spelled as in the AOA language:
//
//  - a glob: `*` any run of characters (dots included, possibly empty), `?`
//    one character, `[abc]` / `[a-z]` / `[!abc]` (or `[^abc]`) one character
//    of (not of) a class, `{a,b,c}` one of literal alternatives, `\c` the
//    character c; `$LAYER_ID` and `$EXPERT_ID` one or more decimal digits;
//    everything else itself;
//  - a regex: ECMAScript (std::regex), where `$LAYER_ID` and `$EXPERT_ID`
//    stand for `([0-9]+)`.
//
// A placeholder used twice must match the same digits both times.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_KEYPATTERN_H
#define AOA_IR_KEYPATTERN_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

/// A pattern that cannot be used: what is wrong, and where in its text (a
/// byte offset, or nullopt when the whole pattern is at fault).
struct KeyPatternError {
  std::string message;
  std::string hint;
  std::optional<size_t> offset;
};

/// The ids a match captured.
struct KeyCaptures {
  std::optional<int64_t> layerId;
  std::optional<int64_t> expertId;
};

class KeyPattern {
public:
  enum class Kind { Glob, Regex };

  static std::optional<KeyPattern> glob(std::string_view text,
                                        KeyPatternError *error = nullptr);
  static std::optional<KeyPattern> regex(std::string_view text,
                                         KeyPatternError *error = nullptr);

  /// Whether the pattern matches all of `key`; on a match, `captures` (when
  /// given) receives the ids, parsed as decimal numbers.
  bool match(std::string_view key, KeyCaptures *captures = nullptr) const;

  Kind kind() const { return kind_; }
  const std::string &text() const { return text_; }
  bool capturesLayerId() const { return layerGroup_ != 0; }
  bool capturesExpertId() const { return expertGroup_ != 0; }

  /// One piece of a glob (public for the matcher in KeyPattern.cpp).
  struct GlobToken {
    enum Kind {
      Literal,
      AnyChar,
      Class,
      Star,
      Alternatives,
      LayerId,
      ExpertId
    };
    Kind kind = Literal;
    /// Literal: the text; Class: pairs of (first, last) characters.
    std::string text;
    bool negated = false;
    std::vector<std::string> alternatives;
  };

private:
  KeyPattern() = default;
  bool matchGlob(std::string_view key, KeyCaptures *captures) const;
  bool matchRegex(std::string_view key, KeyCaptures *captures) const;

  Kind kind_ = Kind::Glob;
  std::string text_;
  std::vector<GlobToken> tokens_;
  /// A placeholder appears more than once: the matcher must compare digits,
  /// so it cannot remember failed positions.
  bool repeatedPlaceholder_ = false;
  std::shared_ptr<const std::regex> regex_;
  /// Glob: 1 when the placeholder is used. Regex: its first group (0: none).
  unsigned layerGroup_ = 0;
  unsigned expertGroup_ = 0;
};

} // namespace aoa

#endif // AOA_IR_KEYPATTERN_H
