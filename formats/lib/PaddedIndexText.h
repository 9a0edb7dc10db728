//===- PaddedIndexText.h - Parsing an index without copying it --*- C++ -*-===//
//
// Private to the formats library. simdjson reads a few bytes past the end of
// the text it parses; parseSafetensorsIndex copies the text into a padded
// buffer for that. The scanner reads the index into a buffer with room to
// spare instead, and parses it in place.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_LIB_PADDEDINDEXTEXT_H
#define AOA_FORMATS_LIB_PADDEDINDEXTEXT_H

#include "aoa/formats/SafetensorsIndex.h"

#include <cstddef>
#include <string_view>

namespace aoa::formats {

/// Readable bytes a buffer needs past the end of its text (at least
/// simdjson's SIMDJSON_PADDING).
inline constexpr size_t kIndexTextPadding = 64;

/// parseSafetensorsIndex for `text` whose buffer holds `capacity` readable
/// bytes from text.data(); without a copy when capacity >= text.size() +
/// kIndexTextPadding.
runtime::Expected<SafetensorsIndex>
parsePaddedSafetensorsIndex(std::string_view text, size_t capacity,
                            std::string_view fileName);

} // namespace aoa::formats

#endif // AOA_FORMATS_LIB_PADDEDINDEXTEXT_H
