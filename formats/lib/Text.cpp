//===- Text.cpp -----------------------------------------------------------===//
#include "Text.h"

namespace aoa::formats {

std::string quote(std::string_view name) {
  static const char kHex[] = "0123456789abcdef";
  std::string text = "'";
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    // UTF-8 bytes are kept: names are written in people's own scripts.
    if (byte < 0x20 || byte == 0x7F) {
      text += "\\x";
      text += kHex[byte >> 4];
      text += kHex[byte & 15];
    } else {
      text += c;
    }
  }
  return text + "'";
}

std::string joinPath(std::string_view directory, std::string_view name) {
  std::string path(directory);
  if (!path.empty() && path.back() != '/')
    path += '/';
  path += name;
  return path;
}

std::string lineColumn(std::string_view text, size_t offset) {
  size_t line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return std::to_string(line) + ":" + std::to_string(offset - lineStart + 1);
}

bool isSafeRelativePath(std::string_view path) {
  if (path.empty() || path.front() == '/' ||
      path.find('\0') != std::string_view::npos)
    return false;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string_view::npos)
      end = path.size();
    std::string_view part = path.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..")
      return false;
    begin = end + 1;
  }
  return true;
}

} // namespace aoa::formats
