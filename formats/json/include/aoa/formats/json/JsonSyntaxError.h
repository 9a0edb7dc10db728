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

} // namespace aoa

#endif // AOA_FORMATS_JSON_JSONSYNTAXERROR_H
