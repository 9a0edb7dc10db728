//===- JsonSyntaxError.h - Where malformed JSON goes wrong ------*- C++ -*-===//
//
// The loaders read JSON with simdjson On-Demand, which is fast but vague
// about a syntax error's place; on that slow path nlohmann's strict parser
// finds the exact character and says what is wrong.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_JSON_JSONSYNTAXERROR_H
#define AOA_FORMATS_JSON_JSONSYNTAXERROR_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace aoa {

struct JsonSyntaxError {
  /// The byte offset of the last character read: inside the offending token.
  size_t offset = 0;
  /// nlohmann's reason, without its "[json.exception...] parse error at
  /// line L, column C: " prefix (the caller's location says it).
  std::string message;
};

/// The first syntax error of `text`, or nullopt when it is well-formed JSON.
std::optional<JsonSyntaxError> findJsonSyntaxError(std::string_view text);

/// The start of the JSON token whose last character is at `offset` (a
/// JsonSyntaxError's offset), for a diagnostic to point at: back over a word
/// (a number or literal), or to a string's opening quote. With
/// `invalidLiteral` (nlohmann's "invalid literal", as in `tru}`) the
/// character at `offset` is the one that broke the literal, which is just
/// before it. Offsets past the text give the text's size.
size_t jsonTokenStart(std::string_view text, size_t offset,
                      bool invalidLiteral = false);

} // namespace aoa

#endif // AOA_FORMATS_JSON_JSONSYNTAXERROR_H
