//===- PlanLineScanner.h - Characters and tokens of a plan line -*- C++ -*-===//
//
// The lexical level of the plan's text form (docs/plan-format.md): spaces,
// punctuation, words, integers, JSON strings and buffer references `%N`,
// each read at a cursor that moves along one line. The scanner also keeps
// the line's first syntax error ("expected X, found Y") with the usage of
// the line kind being parsed as its hint. What a line means is the
// parser's (PlanLineParser.cpp). The calls made on every token are inline.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_PLANLINESCANNER_H
#define AOA_FORMATS_PLAN_LIB_PLANLINESCANNER_H

#include "PlanLineParser.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {
namespace plantext {

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinInt64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxUInt32 = std::numeric_limits<uint32_t>::max();

// ASCII only, without the locale lookups of <cctype> (hot: every token).
inline bool isDigit(char c) { return c >= '0' && c <= '9'; }
inline bool isWordStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool isWordChar(char c) {
  return isWordStart(c) || isDigit(c) || c == '-';
}

/// `text` in quotes for a message, cut short when long.
std::string quote(std::string_view text);

class LineScanner {
public:
  LineScanner(std::string_view line, LineError &error)
      : line_(line), error_(error) {}

  //===--- Characters and tokens -----------------------------------------===//

  void skipSpace() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t'))
      ++pos_;
  }
  bool atEnd() {
    skipSpace();
    return pos_ >= line_.size();
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < line_.size() && line_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c))
      return false;
    ++pos_;
    return true;
  }
  /// The word at the cursor (not consumed); empty when there is none.
  std::string_view peekWord() {
    skipSpace();
    if (pos_ >= line_.size() || !isWordStart(line_[pos_]))
      return {};
    size_t end = pos_ + 1;
    while (end < line_.size() && isWordChar(line_[end]))
      ++end;
    return line_.substr(pos_, end - pos_);
  }
  /// Moves the cursor past `count` characters (a word just peeked).
  void skip(size_t count) { pos_ += count; }
  /// The cursor, as an offset from the start of the line.
  size_t position() const { return pos_; }
  /// Where the next token starts (after spaces).
  size_t tokenStart() {
    skipSpace();
    return pos_;
  }

  //===--- Errors --------------------------------------------------------===//

  /// What the line being parsed looks like: the hint of its errors.
  void setUsage(std::string_view usage) { usage_ = usage; }
  /// Replaces the hint of the error just reported.
  void setHint(std::string hint) { error_.hint = std::move(hint); }
  /// Reports the error at `offset`; returns false.
  bool fail(size_t offset, std::string message);
  /// "expected `what`, found" the next token; returns false.
  bool expected(std::string_view what);
  bool expect(char c, std::string_view what) {
    if (accept(c))
      return true;
    return expected(what);
  }
  /// A field label such as `file` or `box`.
  bool expectWord(std::string_view word) {
    if (peekWord() == word) {
      pos_ += word.size();
      return true;
    }
    return expected("'" + std::string(word) + "'");
  }

  //===--- Literals ------------------------------------------------------===//

  /// A decimal integer in [min, max]; `site` gets where it starts.
  bool integer(std::string_view what, int64_t min, int64_t max, int64_t &value,
               size_t *site = nullptr);
  bool id(std::string_view what, uint32_t &value, size_t *site = nullptr) {
    int64_t v = 0;
    if (!integer(what, 0, kMaxUInt32, v, site))
      return false;
    value = static_cast<uint32_t>(v);
    return true;
  }
  /// A JSON string, unescaped into `value`.
  bool quoted(std::string_view what, std::string &value,
              size_t *site = nullptr);
  /// A buffer reference `%N`; its start is appended to `sites`.
  bool bufferRef(std::string_view what, uint32_t &value,
                 std::vector<size_t> &sites);

private:
  /// The next token in words, for "expected X, found Y".
  std::string found();
  /// The escape sequence at the cursor (a backslash), unescaped onto
  /// `value`.
  bool escape(std::string &value);
  /// Reads 4 hex digits at the cursor into `cp`.
  bool hex4(uint32_t &cp);

  std::string_view line_;
  size_t pos_ = 0;
  LineError &error_;
  std::string_view usage_;
};

} // namespace plantext
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_PLANLINESCANNER_H
