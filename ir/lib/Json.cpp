//===- Json.cpp ------------------------------------------------------------===//
#include "aoa/ir/Json.h"

#include <algorithm>
#include <cstdio>

namespace aoa {

void appendJsonString(std::string &out, std::string_view s) {
  out += '"';
  bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && c != '"' && c != '\\';
  });
  if (plain) {
    out += s;
    out += '"';
    return;
  }
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

} // namespace aoa
