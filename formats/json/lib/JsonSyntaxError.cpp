//===- JsonSyntaxError.cpp ------------------------------------------------===//
#include "aoa/formats/json/JsonSyntaxError.h"

#include <nlohmann/json.hpp>

#include <cctype>

namespace aoa {

namespace {

/// Accepts every value; records where and why the parse stops.
class SyntaxErrorFinder : public nlohmann::json_sax<nlohmann::json> {
public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    failed = true;
    this->position = position;
    message = ex.what();
    size_t colon = message.find(": ");
    if (colon != std::string::npos)
      message = message.substr(colon + 2);
    return false;
  }

  bool failed = false;
  size_t position = 0;
  std::string message;
};

} // namespace

std::optional<JsonSyntaxError> findJsonSyntaxError(std::string_view text) {
  SyntaxErrorFinder finder;
  nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &finder);
  if (!finder.failed)
    return std::nullopt;
  // nlohmann counts the characters it has read, so position - 1 is the last
  // character of the offending token.
  return JsonSyntaxError{finder.position > 0 ? finder.position - 1 : 0,
                         std::move(finder.message)};
}

size_t jsonTokenStart(std::string_view text, size_t offset,
                      bool invalidLiteral) {
  auto isWordChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
           c == '-' || c == '+';
  };
  if (offset >= text.size())
    return text.size();
  if (invalidLiteral && offset > 0 && isWordChar(text[offset - 1]))
    --offset;
  if (isWordChar(text[offset])) {
    while (offset > 0 && isWordChar(text[offset - 1]))
      --offset;
    return offset;
  }
  if (text[offset] == '"') {
    // Back to the opening quote: the previous quote with an even number of
    // backslashes before it.
    for (size_t i = offset; i-- > 0;) {
      if (text[i] != '"')
        continue;
      size_t backslashes = 0;
      while (i > backslashes && text[i - 1 - backslashes] == '\\')
        ++backslashes;
      if (backslashes % 2 == 0)
        return i;
    }
  }
  return offset;
}

} // namespace aoa
