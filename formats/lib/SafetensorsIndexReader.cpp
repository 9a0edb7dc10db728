//===- SafetensorsIndexReader.cpp - Parsing an index's text ---------------===//
//
// simdjson validates the whole text (DOM parse), then On-Demand walks it
// once, straight into the weight map, with the positions of values for
// messages. A syntax error is located by nlohmann's SAX parser, which counts
// the characters it reads (only on failure: it is several times slower).
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/SafetensorsIndex.h"

#include "Text.h"

#include "llvm/ADT/StringMap.h"

#include <cctype>

#include <nlohmann/json.hpp>
#include <simdjson.h>

namespace aoa::formats {

using runtime::Error;
using runtime::Expected;

namespace {

namespace ondemand = simdjson::ondemand;

const char *const kIndexHint =
    "an index is JSON: {\"metadata\": {\"total_size\": BYTES}, "
    "\"weight_map\": {TENSOR: FILE, ...}}; fetch or copy it again";

/// Finds where nlohmann's parser gives up, and why.
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
    // Drop "[json.exception.parse_error.101] parse error at line 1, column
    // 2: "; our location says it.
    size_t colon = message.find(": ");
    if (colon != std::string::npos)
      message = message.substr(colon + 2);
    return false;
  }

  bool failed = false;
  size_t position = 0;
  std::string message;
};

bool isWrongType(simdjson::error_code code) {
  return code == simdjson::INCORRECT_TYPE ||
         code == simdjson::NUMBER_OUT_OF_RANGE;
}

class IndexParser {
public:
  IndexParser(std::string_view text, std::string_view fileName)
      : text_(text), fileName_(fileName), json_(text.data(), text.size()) {}

  Expected<SafetensorsIndex> parse();

private:
  bool parseWeightMap(ondemand::value value, size_t offset);
  bool parseMetadata(ondemand::value value);

  /// "FILE:LINE:COL: what".
  Error failAt(size_t offset, const std::string &what,
               std::string hint = kIndexHint) const {
    return Error{std::string(fileName_) + ":" + lineColumn(text_, offset) +
                     ": " + what,
                 std::move(hint)};
  }
  Error fail(const std::string &what, std::string hint = kIndexHint) const {
    return Error{std::string(fileName_) + ": " + what, std::move(hint)};
  }
  /// The located syntax error nlohmann finds, if any.
  std::optional<Error> syntaxError() const {
    SyntaxErrorFinder finder;
    nlohmann::json::sax_parse(text_.data(), text_.data() + text_.size(),
                              &finder);
    if (!finder.failed)
      return std::nullopt;
    return failAt(tokenStart(finder.position > 0 ? finder.position - 1 : 0),
                  "malformed JSON: " + finder.message);
  }
  /// A JSON syntax error (or invalid UTF-8), located when nlohmann agrees.
  Error malformed(simdjson::error_code code) const {
    if (std::optional<Error> error = syntaxError())
      return *error;
    return fail(std::string("malformed JSON: ") +
                simdjson::error_message(code));
  }

  /// The start of the token whose last character is at `offset` (nlohmann
  /// reports where it stopped reading, at the end of the offending token).
  size_t tokenStart(size_t offset) const {
    if (offset >= text_.size())
      return text_.size();
    auto isWordChar = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
             c == '-' || c == '+';
    };
    if (isWordChar(text_[offset])) {
      while (offset > 0 && isWordChar(text_[offset - 1]))
        --offset;
      return offset;
    }
    if (text_[offset] == '"' && offset > 0) {
      // Back to the opening quote: the previous quote with an even number
      // of backslashes before it.
      for (size_t i = offset; i-- > 0;) {
        if (text_[i] != '"')
          continue;
        size_t backslashes = 0;
        while (i > backslashes && text_[i - 1 - backslashes] == '\\')
          ++backslashes;
        if (backslashes % 2 == 0)
          return i;
      }
    }
    return offset;
  }
  size_t offsetOf(const char *at) const {
    const char *begin = json_.data();
    return at >= begin && at <= begin + json_.size() ? size_t(at - begin) : 0;
  }
  bool reject(Error error) {
    error_ = std::move(error);
    return false;
  }

  std::string_view text_;
  std::string_view fileName_;
  simdjson::padded_string json_;
  SafetensorsIndex index_;
  std::optional<Error> error_;
};

Expected<SafetensorsIndex> IndexParser::parse() {
  // On-Demand validates only what it visits; a DOM parse (a few
  // milliseconds for a 20 MB index) checks the whole text first, the fields
  // that are skipped included.
  {
    simdjson::dom::parser validator;
    simdjson::dom::element root;
    if (simdjson::error_code code = validator.parse(json_).get(root))
      return code == simdjson::EMPTY ? fail("the index is empty")
                                     : malformed(code);
  }
  ondemand::parser parser;
  ondemand::document document;
  if (simdjson::error_code code = parser.iterate(json_).get(document))
    return code == simdjson::EMPTY ? fail("the index is empty")
                                   : malformed(code);
  ondemand::object root;
  if (simdjson::error_code code = document.get_object().get(root))
    return isWrongType(code) ? fail("the index is not a JSON object")
                             : malformed(code);
  bool sawWeightMap = false;
  for (auto result : root) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code code = std::move(result).get(field))
      return malformed(code);
    if (simdjson::error_code code = field.unescaped_key().get(key))
      return malformed(code);
    ondemand::value value = field.value();
    size_t offset = offsetOf(value.raw_json_token().data());
    if (key == "weight_map") {
      if (sawWeightMap)
        return failAt(offset, "\"weight_map\" appears twice");
      sawWeightMap = true;
      if (!parseWeightMap(value, offset))
        return *error_;
    } else if (key == "metadata") {
      if (!parseMetadata(value))
        return *error_;
    }
    // Other fields are tolerated (and skipped by the iteration).
  }
  // simdjson 3.0 has no document::at_end(); past the end of the document
  // there is no current location.
  const char *trailing = nullptr;
  if (!document.current_location().get(trailing))
    return failAt(offsetOf(trailing),
                  "unexpected text after the index's JSON object");
  if (!sawWeightMap)
    return fail("the index has no \"weight_map\"");
  return std::move(index_);
}

bool IndexParser::parseWeightMap(ondemand::value value, size_t offset) {
  ondemand::object map;
  if (simdjson::error_code code = value.get_object().get(map))
    return reject(isWrongType(code)
                      ? failAt(offset, "\"weight_map\" is not an object "
                                       "from tensor names to file names")
                      : malformed(code));
  llvm::StringMap<size_t> seen;
  for (auto result : map) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code code = std::move(result).get(field))
      return reject(malformed(code));
    if (simdjson::error_code code = field.unescaped_key().get(key))
      return reject(malformed(code));
    std::string name(key);
    ondemand::value fileValue = field.value();
    size_t at = offsetOf(fileValue.raw_json_token().data());
    std::string_view file;
    if (simdjson::error_code code = fileValue.get_string().get(file))
      return reject(isWrongType(code)
                        ? failAt(at, "weight_map: the file of tensor " +
                                         quote(name) + " is not a string")
                        : malformed(code));
    if (!isSafeRelativePath(file))
      return reject(failAt(at,
                           "weight_map: tensor " + quote(name) + " is in " +
                               quote(file) +
                               ", which is not a file inside the "
                               "index's directory",
                           "file names in an index are relative to its "
                           "directory, without '..'"));
    auto [slot, inserted] = seen.try_emplace(name, index_.weightMap.size());
    if (!inserted) {
      const std::string &first = index_.weightMap[slot->second].second;
      return reject(failAt(at,
                           "weight_map: tensor " + quote(name) +
                               " is listed twice (in " + quote(first) +
                               " and in " + quote(file) + ")",
                           "a tensor is stored in one file; the index is "
                           "damaged: fetch or copy it again"));
    }
    index_.weightMap.emplace_back(std::move(name), std::string(file));
  }
  return true;
}

bool IndexParser::parseMetadata(ondemand::value value) {
  ondemand::object metadata;
  if (simdjson::error_code code = value.get_object().get(metadata))
    return isWrongType(code) ? true : reject(malformed(code));
  for (auto result : metadata) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code code = std::move(result).get(field))
      return reject(malformed(code));
    if (simdjson::error_code code = field.unescaped_key().get(key))
      return reject(malformed(code));
    if (key != "total_size")
      continue;
    uint64_t size = 0;
    simdjson::error_code code = field.value().get_uint64().get(size);
    if (!code)
      index_.totalSize = size;
    else if (!isWrongType(code))
      return reject(malformed(code));
  }
  return true;
}

} // namespace

Expected<SafetensorsIndex> parseSafetensorsIndex(std::string_view text,
                                                 std::string_view fileName) {
  return IndexParser(text, fileName).parse();
}

} // namespace aoa::formats
