//===- SourceManager.h - Buffers that diagnostics point into ----*- C++ -*-===//
//
// Every piece of text the toolchain reads (a .aoa file, one statement string
// of a JSON config, a whole JSON file) is registered as a buffer. Locations
// name a buffer and a 1-based line and column inside it, so a diagnostic can
// print the source line with a caret.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_SOURCEMANAGER_H
#define AOA_IR_SOURCEMANAGER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

/// A position in a registered buffer. Buffer 0 means "no location".
struct SourceLocation {
  uint32_t buffer = 0;
  uint32_t line = 0;   ///< 1-based
  uint32_t column = 0; ///< 1-based, in code points

  bool isValid() const { return buffer != 0; }
  friend bool operator==(const SourceLocation &a, const SourceLocation &b) {
    return a.buffer == b.buffer && a.line == b.line && a.column == b.column;
  }
};

class SourceManager {
public:
  SourceManager();

  /// Registers text read from `path`. `subPath` names the text's place inside
  /// the file when it is not the whole file, e.g. `aoa_statements[3]` for one
  /// statement string of a JSON config; diagnostics print it after the path.
  uint32_t addBuffer(std::string path, std::string text,
                     std::string subPath = {});

  const std::string &path(uint32_t buffer) const;
  const std::string &subPath(uint32_t buffer) const;
  std::string_view text(uint32_t buffer) const;
  size_t bufferCount() const { return buffers_.size() - 1; }

  /// The text of line `line` (1-based) without its line terminator.
  std::string_view lineText(uint32_t buffer, uint32_t line) const;

  /// `path:line:col`, or `path:subPath:line:col` for a buffer with a subPath.
  std::string describe(SourceLocation loc) const;

  /// The location of byte `offset` of a buffer.
  SourceLocation locationForOffset(uint32_t buffer, size_t offset) const;

private:
  struct Buffer {
    std::string path;
    std::string subPath;
    std::string text;
    std::vector<size_t> lineStarts;
    /// Code points before every kCodePointStride-th byte, so that a column on
    /// a long line (a JSON file or a config on one line) costs at most two
    /// strides of counting, not the whole line before it.
    std::vector<size_t> codePointsAtStride;
  };
  static constexpr size_t kCodePointStride = 1024;
  /// Code points in the first `offset` bytes of `b`.
  static size_t codePointsBefore(const Buffer &b, size_t offset);
  std::vector<Buffer> buffers_;
};

/// Number of UTF-8 code points in `s` (invalid bytes count one each).
size_t countCodePoints(std::string_view s);

} // namespace aoa

#endif // AOA_IR_SOURCEMANAGER_H
