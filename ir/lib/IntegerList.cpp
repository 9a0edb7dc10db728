//===- IntegerList.cpp ----------------------------------------------------===//
#include "aoa/ir/IntegerList.h"

#include <algorithm>
#include <cctype>

namespace aoa {

std::optional<std::vector<int64_t>> parseIntegerList(std::string_view text) {
  size_t pos = 0;
  auto skipSpace = [&] {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  };
  auto accept = [&](char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  };

  std::vector<int64_t> values;
  if (!accept('['))
    return std::nullopt;
  if (!accept(']')) {
    while (true) {
      skipSpace();
      bool negative = false;
      if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) {
        negative = text[pos] == '-';
        ++pos;
      }
      if (pos >= text.size() ||
          !std::isdigit(static_cast<unsigned char>(text[pos])))
        return std::nullopt;
      constexpr int64_t kSaturated = int64_t(1) << 40;
      int64_t value = 0;
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos]))) {
        value = std::min(kSaturated, value * 10 + (text[pos] - '0'));
        ++pos;
      }
      values.push_back(negative ? -value : value);
      if (accept(']'))
        break;
      if (!accept(','))
        return std::nullopt;
      if (accept(']')) // a trailing comma, as Python allows
        break;
    }
  }
  skipSpace();
  if (pos != text.size())
    return std::nullopt;
  return values;
}

} // namespace aoa
