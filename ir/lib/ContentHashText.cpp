//===- ContentHashText.cpp ------------------------------------------------===//
#include "aoa/ir/ContentHashText.h"

namespace aoa {

std::string formatContentHash(uint64_t hash) {
  static const char kHex[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4)
    text[i] = kHex[hash & 15];
  return text;
}

std::optional<uint64_t> parseContentHash(std::string_view text) {
  if (text.size() != 16)
    return std::nullopt;
  uint64_t hash = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return std::nullopt;
    hash = (hash << 4) | uint64_t(digit);
  }
  return hash;
}

} // namespace aoa
