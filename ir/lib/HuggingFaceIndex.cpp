//===- HuggingFaceIndex.cpp -----------------------------------------------===//
#include "aoa/ir/HuggingFaceIndex.h"

#include <algorithm>
#include <cstdio>

namespace aoa {

namespace {

void appendEscape(std::string &out, uint32_t unit) {
  char text[8];
  std::snprintf(text, sizeof(text), "\\u%04x", unsigned(unit));
  out += text;
}

/// Decodes one UTF-8 sequence at `text[i]`; advances `i`. A malformed
/// sequence is one byte of U+FFFD.
uint32_t decodeUtf8(std::string_view text, size_t &i) {
  auto byte = [&](size_t at) { return static_cast<unsigned char>(text[at]); };
  unsigned char lead = byte(i);
  size_t length = lead < 0x80           ? 1
                  : (lead >> 5) == 0x6  ? 2
                  : (lead >> 4) == 0xE  ? 3
                  : (lead >> 3) == 0x1E ? 4
                                        : 0;
  if (length == 1) {
    ++i;
    return lead;
  }
  if (length == 0 || i + length > text.size()) {
    ++i;
    return 0xFFFD;
  }
  uint32_t code = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  static const uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10FFFF ||
      (code >= 0xD800 && code <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += length;
  return code;
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
    uint32_t code = decodeUtf8(text, i);
    if (code >= 0x10000) {
      code -= 0x10000;
      appendEscape(out, 0xD800 + (code >> 10));
      appendEscape(out, 0xDC00 + (code & 0x3FF));
    } else {
      appendEscape(out, code);
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
