//===- Messages.cpp -------------------------------------------------------===//
#include "aoa/runtime/support/Messages.h"

namespace aoa::runtime {

std::string storageMessage(std::string_view fileName, std::string_view what) {
  std::string message(fileName);
  message += ": ";
  message += what;
  return message;
}

void appendHexByte(std::string &out, unsigned char byte) {
  static const char kHex[] = "0123456789abcdef";
  out += kHex[byte >> 4];
  out += kHex[byte & 15];
}

std::string quoteName(std::string_view name) {
  std::string text = "'";
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    // Bytes >= 0x80 are kept: names are UTF-8 (the header parser has
    // validated them) and people write them in their own scripts.
    if (byte < 0x20 || byte == 0x7F) {
      text += "\\x";
      appendHexByte(text, byte);
    } else {
      text += c;
    }
  }
  return text + "'";
}

std::string formatByteRange(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

} // namespace aoa::runtime
