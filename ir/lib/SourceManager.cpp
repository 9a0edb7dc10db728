//===- SourceManager.cpp ---------------------------------------------------===//
#include "aoa/ir/SourceManager.h"

#include <algorithm>
#include <cassert>

namespace aoa {

SourceManager::SourceManager() {
  buffers_.emplace_back(); // buffer 0: "no location"
}

uint32_t SourceManager::addBuffer(std::string path, std::string text,
                                  std::string subPath) {
  Buffer buffer;
  buffer.path = std::move(path);
  buffer.subPath = std::move(subPath);
  buffer.text = std::move(text);
  buffer.lineStarts.push_back(0);
  for (size_t i = 0; i < buffer.text.size(); ++i) {
    char c = buffer.text[i];
    if (c == '\n' ||
        (c == '\r' && (i + 1 >= buffer.text.size() || buffer.text[i + 1] != '\n')))
      buffer.lineStarts.push_back(i + 1);
  }
  std::string_view all = buffer.text;
  size_t codePoints = 0;
  for (size_t at = 0; at <= all.size(); at += kCodePointStride) {
    buffer.codePointsAtStride.push_back(codePoints);
    codePoints += countCodePoints(all.substr(at, kCodePointStride));
  }
  buffers_.push_back(std::move(buffer));
  return static_cast<uint32_t>(buffers_.size() - 1);
}

const std::string &SourceManager::path(uint32_t buffer) const {
  return buffers_.at(buffer).path;
}

const std::string &SourceManager::subPath(uint32_t buffer) const {
  return buffers_.at(buffer).subPath;
}

std::string_view SourceManager::text(uint32_t buffer) const {
  return buffers_.at(buffer).text;
}

std::string_view SourceManager::lineText(uint32_t buffer, uint32_t line) const {
  if (buffer == 0 || buffer >= buffers_.size())
    return {};
  const Buffer &b = buffers_[buffer];
  if (line == 0 || line > b.lineStarts.size())
    return {};
  size_t begin = b.lineStarts[line - 1];
  size_t end = line < b.lineStarts.size() ? b.lineStarts[line] : b.text.size();
  while (end > begin && (b.text[end - 1] == '\n' || b.text[end - 1] == '\r'))
    --end;
  return std::string_view(b.text).substr(begin, end - begin);
}

std::string SourceManager::describe(SourceLocation loc) const {
  if (!loc.isValid() || loc.buffer >= buffers_.size())
    return "<unknown>";
  const Buffer &b = buffers_[loc.buffer];
  std::string out = b.path;
  if (!b.subPath.empty())
    out += ":" + b.subPath;
  out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
  return out;
}

SourceLocation SourceManager::locationForOffset(uint32_t buffer,
                                                size_t offset) const {
  const Buffer &b = buffers_.at(buffer);
  offset = std::min(offset, b.text.size());
  auto it = std::upper_bound(b.lineStarts.begin(), b.lineStarts.end(), offset);
  size_t lineIndex = static_cast<size_t>(it - b.lineStarts.begin()) - 1;
  size_t column =
      codePointsBefore(b, offset) - codePointsBefore(b, b.lineStarts[lineIndex]);
  return SourceLocation{buffer, static_cast<uint32_t>(lineIndex + 1),
                        static_cast<uint32_t>(column + 1)};
}

size_t SourceManager::codePointsBefore(const Buffer &b, size_t offset) {
  size_t stride = offset / kCodePointStride;
  size_t start = stride * kCodePointStride;
  return b.codePointsAtStride[stride] +
         countCodePoints(std::string_view(b.text).substr(start, offset - start));
}

size_t countCodePoints(std::string_view s) {
  size_t count = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80)
      ++count;
  return count;
}

} // namespace aoa
