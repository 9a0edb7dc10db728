//===- HuggingFaceIndex.cpp -----------------------------------------------===//

#include "aoa/ir/HuggingFaceIndex.h"

#include <algorithm>
#include <cstdio>

namespace aoa {

namespace {

void appendEscape(std::string &out, uint32_t unit) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", unit);
  out += buffer;
}

/// Appends `s` (UTF-8) as Python's json.dumps writes a str with
/// ensure_ascii: short escapes for the usual control characters, \u00XX
/// for the others, and every non-ASCII character as \uXXXX (UTF-16 units,
/// so characters past U+FFFF become surrogate pairs). Bytes that are not
/// UTF-8 are written as the code point of the byte.
void appendPythonJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20)
          appendEscape(out, c);
        else
          out += static_cast<char>(c);
      }
      continue;
    }
    size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    uint32_t cp = length == 4 ? c & 0x07 : length == 3 ? c & 0x0F : c & 0x1F;
    bool valid = length > 1 && i + length <= s.size();
    for (size_t k = 1; valid && k < length; ++k) {
      unsigned char next = static_cast<unsigned char>(s[i + k]);
      valid = (next & 0xC0) == 0x80;
      cp = (cp << 6) | (next & 0x3F);
    }
    if (!valid) {
      appendEscape(out, c);
      ++i;
      continue;
    }
    i += length;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      appendEscape(out, 0xD800 + (cp >> 10));
      appendEscape(out, 0xDC00 + (cp & 0x3FF));
    } else {
      appendEscape(out, cp);
    }
  }
  out += '"';
}

} // namespace

std::string
formatHuggingFaceIndex(std::vector<std::pair<std::string, std::string>> weightMap,
                       uint64_t totalSize) {
  // std::string orders by bytes, which for UTF-8 is code point order, as
  // Python's sort_keys.
  std::sort(weightMap.begin(), weightMap.end());
  std::string out = "{\n  \"metadata\": {\n    \"total_size\": " +
                    std::to_string(totalSize) + "\n  },\n  \"weight_map\": {";
  for (size_t i = 0; i < weightMap.size(); ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    appendPythonJsonString(out, weightMap[i].first);
    out += ": ";
    appendPythonJsonString(out, weightMap[i].second);
  }
  out += weightMap.empty() ? "}\n}\n" : "\n  }\n}\n";
  return out;
}

} // namespace aoa
