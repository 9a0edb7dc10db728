//===- PaddedIndexText.h - Parsing an index without copying it --*- C++ -*-===//
//
// Private to the formats library. simdjson reads a few bytes past the end of
// the text it parses; parseSafetensorsIndex copies the text into a padded
// buffer for that. The scanner maps the index (or reads it into a buffer
// with room to spare) instead, and parses it in place.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_LIB_PADDEDINDEXTEXT_H
#define AOA_FORMATS_LIB_PADDEDINDEXTEXT_H

#include "aoa/formats/SafetensorsIndex.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace aoa::formats {

/// Readable bytes a buffer needs past the end of its text (at least
/// simdjson's SIMDJSON_PADDING).
inline constexpr size_t kIndexTextPadding = 64;

/// A file's text with kIndexTextPadding readable bytes after its end:
/// mapped when its last page has that much room (no copy, and no fresh
/// anonymous pages, which are slow on some virtual machines), else read into
/// a buffer with room to spare. As for any mapping, the file must not be
/// truncated while it is open.
class PaddedFileText {
public:
  static runtime::Expected<PaddedFileText> read(const std::string &path);
  PaddedFileText(PaddedFileText &&other) noexcept;
  PaddedFileText &operator=(PaddedFileText &&) = delete;
  PaddedFileText(const PaddedFileText &) = delete;
  PaddedFileText &operator=(const PaddedFileText &) = delete;
  ~PaddedFileText();

  std::string_view text() const { return text_; }
  /// Readable bytes from text().data().
  size_t capacity() const { return capacity_; }

private:
  PaddedFileText() = default;

  void *mapping_ = nullptr;
  size_t mappedSize_ = 0;
  std::string buffer_;
  std::string_view text_;
  size_t capacity_ = 0;
};

/// parseSafetensorsIndex for `text` whose buffer holds `capacity` readable
/// bytes from text.data(); without a copy when capacity >= text.size() +
/// kIndexTextPadding.
runtime::Expected<SafetensorsIndex>
parsePaddedSafetensorsIndex(std::string_view text, size_t capacity,
                            std::string_view fileName);

} // namespace aoa::formats

#endif // AOA_FORMATS_LIB_PADDEDINDEXTEXT_H
