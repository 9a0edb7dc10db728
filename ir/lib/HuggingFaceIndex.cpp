//===- HuggingFaceIndex.cpp -----------------------------------------------===//
#include "aoa/ir/HuggingFaceIndex.h"

#include "aoa/ir/Utf8.h"

#include <algorithm>
#include <cstdio>

namespace aoa {

namespace {

void appendEscape(std::string &out, uint16_t unit) {
  char text[8]; // "\\u" and four hex digits: a UTF-16 code unit fits
  std::snprintf(text, sizeof(text), "\\u%04x", unsigned(unit));
  out += text;
}

} // namespace

void appendPythonJsonString(std::string &out, std::string_view text) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    switch (c) {
    case '"':
      out += "\\\"";
      ++i;
      continue;
    case '\\':
      out += "\\\\";
      ++i;
      continue;
    case '\b':
      out += "\\b";
      ++i;
      continue;
    case '\f':
      out += "\\f";
      ++i;
      continue;
    case '\n':
      out += "\\n";
      ++i;
      continue;
    case '\r':
      out += "\\r";
      ++i;
      continue;
    case '\t':
      out += "\\t";
      ++i;
      continue;
    default:
      break;
    }
    // Python escapes everything outside ' ' .. '~' (ensure_ascii).
    if (c >= ' ' && c <= '~') {
      out += c;
      ++i;
      continue;
    }
    uint32_t code = decodeUtf8(text, i).value_or(0xFFFD);
    if (code >= 0x10000) {
      code -= 0x10000;
      appendEscape(out, uint16_t(0xD800 + (code >> 10)));
      appendEscape(out, uint16_t(0xDC00 + (code & 0x3FF)));
    } else {
      appendEscape(out, uint16_t(code));
    }
  }
  out += '"';
}

std::string
formatHuggingFaceIndex(std::vector<std::pair<std::string, std::string>> weightMap,
                       uint64_t totalSize) {
  // std::string orders by bytes, which for UTF-8 is code point order, as
  // Python's sort_keys; an index built in key order is not sorted again.
  if (!std::is_sorted(weightMap.begin(), weightMap.end()))
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
