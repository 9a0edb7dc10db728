//===- PlanLineScanner.cpp - Characters and tokens of a plan line ---------===//
//
// The literals that take more than a glance: integers, checked against
// their range without overflowing, and JSON strings with their escapes
// (\uXXXX and surrogate pairs decoded to UTF-8).
//
//===----------------------------------------------------------------------===//
#include "PlanLineScanner.h"

#include <cctype>

namespace aoa {
namespace plantext {

namespace {

constexpr const char *kEscapeHint =
    "strings are JSON strings: escape '\"' and '\\' with a backslash; "
    "\\n, \\t, \\r, \\b, \\f, \\/ and \\uXXXX are the other escapes";

/// Appends code point `cp` to `out` in UTF-8.
void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

} // namespace

std::string quote(std::string_view text) {
  constexpr size_t kMaxShown = 60;
  if (text.size() > kMaxShown)
    return "'" + std::string(text.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(text) + "'";
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

std::string LineScanner::found() {
  skipSpace();
  if (pos_ >= line_.size())
    return "the end of the line";
  char c = line_[pos_];
  if (c == '"')
    return "a string";
  size_t end = pos_;
  if (c == '%' || c == '-')
    ++end;
  while (end < line_.size() && isWordChar(line_[end]))
    ++end;
  if (end == pos_)
    return quote(line_.substr(pos_, 1));
  return quote(line_.substr(pos_, end - pos_));
}

bool LineScanner::fail(size_t offset, std::string message) {
  error_.offset = offset;
  error_.message = std::move(message);
  error_.hint = std::string(usage_);
  return false;
}

bool LineScanner::expected(std::string_view what) {
  skipSpace();
  return fail(pos_, "expected " + std::string(what) + ", found " + found());
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

bool LineScanner::integer(std::string_view what, int64_t min, int64_t max,
                          int64_t &value, size_t *site) {
  skipSpace();
  size_t start = pos_;
  if (site)
    *site = start;
  bool negative = pos_ < line_.size() && line_[pos_] == '-' && min < 0;
  size_t digits = pos_ + (negative ? 1 : 0);
  if (digits >= line_.size() || !isDigit(line_[digits]))
    return expected(what);
  size_t end = digits;
  while (end < line_.size() && isDigit(line_[end]))
    ++end;
  if (end < line_.size() && isWordChar(line_[end]))
    return expected(what); // `12ab`: found() shows the whole token
  // Accumulate negatively so that INT64_MIN is representable.
  int64_t v = 0;
  bool overflow = false;
  for (size_t i = digits; i < end && !overflow; ++i)
    overflow = __builtin_mul_overflow(v, 10, &v) ||
               __builtin_sub_overflow(v, line_[i] - '0', &v);
  if (!negative && !overflow)
    overflow = __builtin_mul_overflow(v, -1, &v);
  auto text = [&] { return std::string(line_.substr(start, end - start)); };
  if (overflow)
    return fail(start, std::string(what) + " " + text() +
                           " is out of range (at most " + std::to_string(max) +
                           ")");
  if (v < min)
    return fail(start, std::string(what) + " must be at least " +
                           std::to_string(min) + ", not " + text());
  if (v > max)
    return fail(start, std::string(what) + " must be at most " +
                           std::to_string(max) + ", not " + text());
  pos_ = end;
  value = v;
  return true;
}

bool LineScanner::quoted(std::string_view what, std::string &value,
                         size_t *site) {
  skipSpace();
  size_t start = pos_;
  if (site)
    *site = start;
  if (!accept('"'))
    return expected(what);
  value.clear();
  while (true) {
    if (pos_ >= line_.size())
      return fail(start, "unterminated string: " + std::string(what) +
                             " has no closing '\"'");
    char c = line_[pos_];
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      fail(pos_, "control character in a string");
      error_.hint = kEscapeHint;
      return false;
    }
    if (c != '\\') {
      value += c;
      ++pos_;
      continue;
    }
    if (!escape(value))
      return false;
  }
}

bool LineScanner::escape(std::string &value) {
  size_t at = pos_;
  ++pos_;
  char e = pos_ < line_.size() ? line_[pos_] : '\0';
  ++pos_;
  switch (e) {
  case '"':
  case '\\':
  case '/':
    value += e;
    return true;
  case 'n':
    value += '\n';
    return true;
  case 't':
    value += '\t';
    return true;
  case 'r':
    value += '\r';
    return true;
  case 'b':
    value += '\b';
    return true;
  case 'f':
    value += '\f';
    return true;
  case 'u': {
    uint32_t cp = 0;
    bool ok = hex4(cp);
    if (ok && cp >= 0xD800 && cp <= 0xDBFF) {
      // A high surrogate needs its low half: \uD83D\uDE00.
      uint32_t low = 0;
      ok = pos_ + 1 < line_.size() && line_[pos_] == '\\' &&
           line_[pos_ + 1] == 'u' && (pos_ += 2, hex4(low)) && low >= 0xDC00 &&
           low <= 0xDFFF;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    } else if (ok && cp >= 0xDC00 && cp <= 0xDFFF) {
      ok = false;
    }
    if (!ok) {
      fail(at, "invalid \\u escape in a string");
      error_.hint = kEscapeHint;
      return false;
    }
    appendUtf8(value, cp);
    return true;
  }
  default:
    fail(at, "invalid escape in a string");
    error_.hint = kEscapeHint;
    return false;
  }
}

bool LineScanner::hex4(uint32_t &cp) {
  if (pos_ + 4 > line_.size())
    return false;
  cp = 0;
  for (size_t i = 0; i < 4; ++i) {
    char c = line_[pos_ + i];
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return false;
    cp = cp * 16 + static_cast<uint32_t>(
                       isDigit(c) ? c - '0' : (std::tolower(c) - 'a' + 10));
  }
  pos_ += 4;
  return true;
}

bool LineScanner::bufferRef(std::string_view what, uint32_t &value,
                            std::vector<size_t> &sites) {
  skipSpace();
  sites.push_back(pos_);
  if (pos_ + 1 >= line_.size() || line_[pos_] != '%' ||
      !isDigit(line_[pos_ + 1]))
    return expected(what);
  ++pos_;
  int64_t v = 0;
  if (!integer("a buffer id", 0, kMaxUInt32, v))
    return false;
  value = static_cast<uint32_t>(v);
  return true;
}

} // namespace plantext
} // namespace aoa
