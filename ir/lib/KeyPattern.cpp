//===- KeyPattern.cpp -----------------------------------------------------===//
//
// Globs are matched by backtracking over their tokens; without a repeated
// placeholder a position that failed once fails again, so failures are
// remembered and a match costs O(tokens * key length) at worst.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/KeyPattern.h"

#include <cctype>

namespace aoa {

namespace {

constexpr std::string_view kLayerId = "$LAYER_ID";
constexpr std::string_view kExpertId = "$EXPERT_ID";
/// Longer patterns are a mistake, and the matcher recurses once per token.
constexpr size_t kMaxPatternSize = 4096;
/// Ids are int64; more digits cannot be one.
constexpr size_t kMaxIdDigits = 18;

bool fail(KeyPatternError *error, std::string message, std::string hint,
          std::optional<size_t> offset) {
  if (error)
    *error = KeyPatternError{std::move(message), std::move(hint), offset};
  return false;
}

bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// At a `$`: the placeholder spelled there, or empty (and an error) for an
/// unknown one.
std::string_view placeholderAt(std::string_view text, size_t at) {
  std::string_view rest = text.substr(at);
  for (std::string_view name : {kLayerId, kExpertId})
    if (rest.substr(0, name.size()) == name &&
        (rest.size() == name.size() || !isIdentChar(rest[name.size()])))
      return name;
  return {};
}

std::string unknownPlaceholder(std::string_view text, size_t at) {
  size_t end = at + 1;
  while (end < text.size() && isIdentChar(text[end]))
    ++end;
  return std::string(text.substr(at, end - at));
}

const char *const kPlaceholderHint =
    "the placeholders are $LAYER_ID and $EXPERT_ID (one or more digits); "
    "write a literal '$' as '\\$'";

/// Reads `[...]` starting at text[at] == '['; sets `end` past the ']'.
bool parseClass(std::string_view text, size_t at, size_t &end,
                KeyPattern::GlobToken &token, KeyPatternError *error) {
  token.kind = KeyPattern::GlobToken::Class;
  size_t i = at + 1;
  if (i < text.size() && (text[i] == '!' || text[i] == '^')) {
    token.negated = true;
    ++i;
  }
  bool first = true;
  while (i < text.size() && (text[i] != ']' || first)) {
    first = false;
    char low = text[i];
    if (low == '\\' && i + 1 < text.size())
      low = text[++i];
    ++i;
    char high = low;
    if (i + 1 < text.size() && text[i] == '-' && text[i + 1] != ']') {
      high = text[i + 1];
      if (high == '\\' && i + 2 < text.size())
        high = text[++i + 1];
      i += 2;
      if (static_cast<unsigned char>(high) < static_cast<unsigned char>(low))
        return fail(error,
                    std::string("character range '") + low + "-" + high +
                        "' is reversed",
                    "write the lower character first, e.g. [0-9]", i - 1);
    }
    token.text += low;
    token.text += high;
  }
  if (i >= text.size())
    return fail(error, "'[' opens a character class that is never closed",
                "close it with ']', or write a literal '[' as '\\['", at);
  end = i + 1;
  return true;
}

/// Reads `{a,b}` starting at text[at] == '{'.
bool parseAlternatives(std::string_view text, size_t at, size_t &end,
                       KeyPattern::GlobToken &token, KeyPatternError *error) {
  token.kind = KeyPattern::GlobToken::Alternatives;
  std::string current;
  for (size_t i = at + 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      current += text[++i];
    } else if (c == ',' || c == '}') {
      token.alternatives.push_back(std::move(current));
      current.clear();
      if (c == '}') {
        end = i + 1;
        return true;
      }
    } else if (c == '*' || c == '?' || c == '[' || c == '{' || c == '$') {
      return fail(error,
                  std::string("'") + c +
                      "' inside '{...}': alternatives are literal text",
                  "write separate rules, or escape the character as '\\" +
                      std::string(1, c) + "'",
                  i);
    } else {
      current += c;
    }
  }
  return fail(error, "'{' opens alternatives that are never closed",
              "close them with '}', or write a literal '{' as '\\{'", at);
}

class GlobMatcher {
public:
  GlobMatcher(const std::vector<KeyPattern::GlobToken> &tokens,
              std::string_view key, bool remember)
      : tokens_(tokens), key_(key), remember_(remember) {
    if (remember_)
      failed_.assign((tokens_.size() + 1) * (key_.size() + 1), false);
  }

  bool match(size_t token, size_t pos) {
    if (token == tokens_.size())
      return pos == key_.size();
    size_t slot = token * (key_.size() + 1) + pos;
    if (remember_ && failed_[slot])
      return false;
    bool ok = step(token, pos);
    if (!ok && remember_)
      failed_[slot] = true;
    return ok;
  }

  std::string_view layerDigits, expertDigits;

private:
  bool step(size_t token, size_t pos) {
    const KeyPattern::GlobToken &t = tokens_[token];
    std::string_view rest = key_.substr(pos);
    switch (t.kind) {
    case KeyPattern::GlobToken::Literal:
      return rest.substr(0, t.text.size()) == t.text &&
             match(token + 1, pos + t.text.size());
    case KeyPattern::GlobToken::AnyChar:
      return !rest.empty() && match(token + 1, pos + 1);
    case KeyPattern::GlobToken::Class: {
      if (rest.empty())
        return false;
      auto c = static_cast<unsigned char>(rest[0]);
      bool in = false;
      for (size_t i = 0; i + 1 < t.text.size() && !in; i += 2)
        in = static_cast<unsigned char>(t.text[i]) <= c &&
             c <= static_cast<unsigned char>(t.text[i + 1]);
      return in != t.negated && match(token + 1, pos + 1);
    }
    case KeyPattern::GlobToken::Star:
      for (size_t end = key_.size() + 1; end-- > pos;)
        if (match(token + 1, end))
          return true;
      return false;
    case KeyPattern::GlobToken::Alternatives:
      for (const std::string &alternative : t.alternatives)
        if (rest.substr(0, alternative.size()) == alternative &&
            match(token + 1, pos + alternative.size()))
          return true;
      return false;
    case KeyPattern::GlobToken::LayerId:
    case KeyPattern::GlobToken::ExpertId: {
      std::string_view &digits =
          t.kind == KeyPattern::GlobToken::LayerId ? layerDigits : expertDigits;
      // The whole run of digits: ids never end inside one.
      size_t run = 0;
      while (run < rest.size() &&
             std::isdigit(static_cast<unsigned char>(rest[run])))
        ++run;
      if (run == 0 || run > kMaxIdDigits)
        return false;
      if (!digits.empty()) // a repeated placeholder: the same digits again
        return rest.substr(0, run) == digits && match(token + 1, pos + run);
      digits = rest.substr(0, run);
      if (match(token + 1, pos + run))
        return true;
      digits = {};
      return false;
    }
    }
    return false;
  }

  const std::vector<KeyPattern::GlobToken> &tokens_;
  std::string_view key_;
  bool remember_;
  std::vector<bool> failed_;
};

int64_t parseDigits(std::string_view digits) {
  int64_t value = 0;
  for (char c : digits)
    value = value * 10 + (c - '0');
  return value;
}

} // namespace

std::optional<KeyPattern> KeyPattern::glob(std::string_view text,
                                           KeyPatternError *error) {
  if (text.empty()) {
    fail(error, "the pattern is empty", "a glob such as \"model.layers.*\"",
         std::nullopt);
    return std::nullopt;
  }
  if (text.size() > kMaxPatternSize) {
    fail(error,
         "the pattern has " + std::to_string(text.size()) +
             " characters; at most " + std::to_string(kMaxPatternSize) +
             " are supported",
         "split it into several rules", std::nullopt);
    return std::nullopt;
  }
  KeyPattern pattern;
  pattern.kind_ = Kind::Glob;
  pattern.text_ = std::string(text);
  unsigned layerUses = 0, expertUses = 0;
  auto literal = [&](char c) {
    if (pattern.tokens_.empty() ||
        pattern.tokens_.back().kind != GlobToken::Literal)
      pattern.tokens_.push_back(GlobToken{});
    pattern.tokens_.back().text += c;
  };
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    GlobToken token;
    size_t end = i + 1;
    switch (c) {
    case '\\':
      if (i + 1 == text.size()) {
        fail(error, "the pattern ends in '\\', which escapes nothing",
             "write a literal backslash as '\\\\'", i);
        return std::nullopt;
      }
      literal(text[i + 1]);
      i += 2;
      continue;
    case '*':
      // `**` is the same as `*`.
      if (!pattern.tokens_.empty() &&
          pattern.tokens_.back().kind == GlobToken::Star) {
        ++i;
        continue;
      }
      token.kind = GlobToken::Star;
      break;
    case '?':
      token.kind = GlobToken::AnyChar;
      break;
    case '[':
      if (!parseClass(text, i, end, token, error))
        return std::nullopt;
      break;
    case '{':
      if (!parseAlternatives(text, i, end, token, error))
        return std::nullopt;
      break;
    case '$': {
      std::string_view name = placeholderAt(text, i);
      if (name.empty()) {
        fail(error, "unknown placeholder '" + unknownPlaceholder(text, i) + "'",
             kPlaceholderHint, i);
        return std::nullopt;
      }
      bool layer = name == kLayerId;
      token.kind = layer ? GlobToken::LayerId : GlobToken::ExpertId;
      ++(layer ? layerUses : expertUses);
      end = i + name.size();
      break;
    }
    default:
      literal(c);
      ++i;
      continue;
    }
    pattern.tokens_.push_back(std::move(token));
    i = end;
  }
  pattern.layerGroup_ = layerUses ? 1 : 0;
  pattern.expertGroup_ = expertUses ? 1 : 0;
  pattern.repeatedPlaceholder_ = layerUses > 1 || expertUses > 1;
  return pattern;
}

std::optional<KeyPattern> KeyPattern::regex(std::string_view text,
                                            KeyPatternError *error) {
  if (text.empty()) {
    fail(error, "the regex is empty", "a regex such as \"model\\\\..*\"",
         std::nullopt);
    return std::nullopt;
  }
  if (text.size() > kMaxPatternSize) {
    fail(error,
         "the regex has " + std::to_string(text.size()) +
             " characters; at most " + std::to_string(kMaxPatternSize) +
             " are supported",
         "split it into several rules", std::nullopt);
    return std::nullopt;
  }
  KeyPattern pattern;
  pattern.kind_ = Kind::Regex;
  pattern.text_ = std::string(text);
  // Rewrite the placeholders as groups, counting the capturing groups before
  // them: '(' outside a class, not escaped, not followed by '?'.
  std::string rewritten;
  unsigned groups = 0;
  bool inClass = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      rewritten += c;
      rewritten += text[++i];
      continue;
    }
    if (inClass) {
      inClass = c != ']';
      rewritten += c;
      continue;
    }
    if (c == '[') {
      inClass = true;
      rewritten += c;
      // A ']' right after '[' or '[^' is a member, not the end.
      if (i + 1 < text.size() && text[i + 1] == '^')
        rewritten += text[++i];
      if (i + 1 < text.size() && text[i + 1] == ']')
        rewritten += text[++i];
      continue;
    }
    if (c == '(' && (i + 1 == text.size() || text[i + 1] != '?'))
      ++groups;
    if (c == '$' && i + 1 < text.size() && isIdentChar(text[i + 1])) {
      std::string_view name = placeholderAt(text, i);
      if (name.empty()) {
        fail(error, "unknown placeholder '" + unknownPlaceholder(text, i) + "'",
             "the placeholders are $LAYER_ID and $EXPERT_ID (one or more "
             "digits); '$' alone is the end of the key",
             i);
        return std::nullopt;
      }
      unsigned &group =
          name == kLayerId ? pattern.layerGroup_ : pattern.expertGroup_;
      if (group) {
        rewritten += "\\" + std::to_string(group);
        pattern.repeatedPlaceholder_ = true;
      } else {
        group = ++groups;
        rewritten += "([0-9]+)";
      }
      i += name.size() - 1;
      continue;
    }
    rewritten += c;
  }
  try {
    pattern.regex_ = std::make_shared<const std::regex>(
        rewritten, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error &problem) {
    fail(error, std::string("invalid regex: ") + problem.what(),
         "regexes use ECMAScript syntax and match the whole key, e.g. "
         "\"model\\\\.layers\\\\.$LAYER_ID\\\\..*\"",
         std::nullopt);
    return std::nullopt;
  }
  return pattern;
}

bool KeyPattern::match(std::string_view key, KeyCaptures *captures) const {
  return kind_ == Kind::Glob ? matchGlob(key, captures)
                             : matchRegex(key, captures);
}

bool KeyPattern::matchGlob(std::string_view key, KeyCaptures *captures) const {
  GlobMatcher matcher(tokens_, key, !repeatedPlaceholder_);
  if (!matcher.match(0, 0))
    return false;
  if (captures) {
    *captures = KeyCaptures{};
    if (!matcher.layerDigits.empty())
      captures->layerId = parseDigits(matcher.layerDigits);
    if (!matcher.expertDigits.empty())
      captures->expertId = parseDigits(matcher.expertDigits);
  }
  return true;
}

bool KeyPattern::matchRegex(std::string_view key, KeyCaptures *captures) const {
  std::match_results<std::string_view::const_iterator> groups;
  if (!std::regex_match(key.begin(), key.end(), groups, *regex_))
    return false;
  if (captures) {
    *captures = KeyCaptures{};
    auto id = [&](unsigned group) -> std::optional<int64_t> {
      if (!group || !groups[group].matched ||
          groups[group].length() > static_cast<long>(kMaxIdDigits))
        return std::nullopt;
      return parseDigits(
          std::string_view(&*groups[group].first, groups[group].length()));
    };
    captures->layerId = id(layerGroup_);
    captures->expertId = id(expertGroup_);
  }
  return true;
}

} // namespace aoa
