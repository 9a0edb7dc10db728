//===- JsonSupport.cpp -----------------------------------------------------===//
#include "aoa/formats/json/JsonSupport.h"

namespace aoa {

std::optional<nlohmann::ordered_json>
parseJsonBuffer(const SourceManager &sources, uint32_t buffer,
                DiagnosticEngine &diags, const std::string &what,
                const std::string &hint) {
  std::string_view text = sources.text(buffer);
  auto report = [&](size_t offset, const std::string &message) {
    diags
        .error(sources.locationForOffset(buffer, offset),
               "malformed JSON " + what + ": " + message)
        .hint(hint);
    return std::nullopt;
  };
  try {
    return nlohmann::ordered_json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error &e) {
    // nlohmann reports the byte just past the offending character.
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    std::string message = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at line
    // 1, column 2: " prefix; our location says it better.
    size_t colon = message.find(": ");
    if (colon != std::string::npos)
      message = message.substr(colon + 2);
    return report(offset, message);
  } catch (const nlohmann::json::exception &e) {
    // The other parse-time error is a number too large for a double
    // (out_of_range.406, "number overflow parsing '1E999'"), which carries
    // no offset: point at the number it quotes.
    std::string message = e.what();
    size_t offset = 0;
    size_t quote = message.find('\'');
    size_t closing = message.rfind('\'');
    if (quote != std::string::npos && closing > quote + 1) {
      size_t at = text.find(message.substr(quote + 1, closing - quote - 1));
      if (at != std::string_view::npos)
        offset = at;
    }
    size_t bracket = message.find("] ");
    if (bracket != std::string::npos)
      message = message.substr(bracket + 2);
    return report(offset, message);
  }
}

SourceLocation locateKey(const SourceManager &sources, uint32_t buffer,
                         const std::string &key) {
  std::string_view text = sources.text(buffer);
  size_t at = text.find("\"" + key + "\"");
  if (at == std::string_view::npos)
    return SourceLocation{buffer, 1, 1};
  return sources.locationForOffset(buffer, at);
}

std::string describeJsonValue(const nlohmann::ordered_json &value) {
  using Type = nlohmann::ordered_json::value_t;
  switch (value.type()) {
  case Type::string:
    return "a string";
  case Type::array:
    return "a list";
  case Type::object:
    return "an object";
  case Type::boolean:
    return value.get<bool>() ? "true" : "false";
  case Type::null:
    return "null";
  default:
    return "the number " + value.dump();
  }
}

} // namespace aoa
