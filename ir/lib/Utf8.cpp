//===- Utf8.cpp -----------------------------------------------------------===//
#include "aoa/ir/Utf8.h"

#include <cstring>

namespace aoa {

std::optional<uint32_t> decodeUtf8(std::string_view text, size_t &i) {
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
    return std::nullopt;
  }
  uint32_t code = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return std::nullopt;
    }
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  static const uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10FFFF ||
      (code >= 0xD800 && code <= 0xDFFF)) {
    ++i;
    return std::nullopt;
  }
  i += length;
  return code;
}

bool isValidUtf8(std::string_view text) {
  // Names and keys are nearly always ASCII: skip over it eight bytes at a
  // time while no byte has its high bit set (a plan's verifier checks
  // millions of names), then a byte at a time, and decode only from the
  // first byte that is not ASCII.
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  for (size_t i = 0; i < text.size();) {
    uint64_t word;
    if (i + sizeof word <= text.size() &&
        (std::memcpy(&word, text.data() + i, sizeof word), !(word & kHighBits))) {
      i += sizeof word;
      continue;
    }
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    if (!decodeUtf8(text, i))
      return false;
  }
  return true;
}

} // namespace aoa
