//===- SafetensorsIndexWriter.cpp - An index as transformers writes it ----===//
#include "aoa/formats/SafetensorsIndex.h"

#include "Text.h"

#include <algorithm>
#include <cstdio>

namespace aoa::formats {

using runtime::Error;
using runtime::Expected;

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

Expected<std::string> formatSafetensorsIndex(const ShardMetadata &layout) {
  uint64_t totalSize = 0;
  for (TensorRef tensor : layout.tensors()) {
    auto fail = [&](const std::string &what) {
      return Error{"tensor " + quote(tensor.key()) + ": " + what,
                   "a Hugging Face directory stores every tensor whole, "
                   "once, under its own name (packHuggingFaceShards makes "
                   "such a layout)"};
    };
    if (tensor.shardCount() != 1)
      return fail("has " + std::to_string(tensor.shardCount()) +
                  " shards, not one");
    ShardRef shard = tensor.shards()[0];
    if (shard.flatRange() || shard.localShape() != tensor.globalShape() ||
        std::any_of(shard.globalOffset().begin(), shard.globalOffset().end(),
                    [](int64_t x) { return x != 0; }))
      return fail("its shard is not the whole tensor");
    if (shard.name() != tensor.key())
      return fail("is stored under another name, " + quote(shard.name()));
    std::optional<int64_t> count = elementCount(tensor.globalShape());
    if (!count)
      return fail("its shape " + formatShape(tensor.globalShape()) +
                  " has no element count");
    uint64_t bytes = uint64_t(*count) * dtypeSize(tensor.dtype());
    if (dtypeSize(tensor.dtype()) != 0 &&
        bytes / dtypeSize(tensor.dtype()) != uint64_t(*count))
      return fail("its byte size overflows");
    totalSize += bytes;
  }

  std::string text = "{\n  \"metadata\": {\n    \"total_size\": ";
  text += std::to_string(totalSize);
  text += "\n  },\n  \"weight_map\": {";
  bool first = true;
  for (TensorId id : layout.tensorIdsByKey()) {
    TensorRef tensor = layout.tensor(id);
    text += first ? "\n    " : ",\n    ";
    first = false;
    appendPythonJsonString(text, tensor.key());
    text += ": ";
    appendPythonJsonString(text, tensor.shards()[0].file());
  }
  text += first ? "}\n}\n" : "\n  }\n}\n";
  return text;
}

} // namespace aoa::formats
