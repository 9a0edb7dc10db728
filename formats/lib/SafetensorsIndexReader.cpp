//===- SafetensorsIndexReader.cpp - Parsing an index's text ---------------===//
//
// simdjson On-Demand walks the text once, straight into the weight map,
// with the positions of values for messages; the fields that are ignored are
// read to their end too, so that all of the text is checked. A syntax error
// is located by nlohmann's SAX parser, which counts the characters it reads
// (only on failure: it is several times slower).
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/SafetensorsIndex.h"

#include "aoa/formats/json/JsonSyntaxError.h"

#include "PaddedIndexText.h"
#include "Text.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <numeric>

#include <simdjson.h>

namespace aoa::formats {

using runtime::Error;
using runtime::Expected;

namespace {

namespace ondemand = simdjson::ondemand;

const char *const kIndexHint =
    "an index is JSON: {\"metadata\": {\"total_size\": BYTES}, "
    "\"weight_map\": {TENSOR: FILE, ...}}; fetch or copy it again";

bool isWrongType(simdjson::error_code code) {
  return code == simdjson::INCORRECT_TYPE ||
         code == simdjson::NUMBER_OUT_OF_RANGE;
}

/// Reads `value` to its end, so that On-Demand checks its syntax (it only
/// checks what is read): the index's fields other than weight_map and
/// metadata.total_size are ignored, but must be JSON.
simdjson::error_code validateValue(ondemand::value value) {
  ondemand::json_type type;
  if (simdjson::error_code code = value.type().get(type))
    return code;
  switch (type) {
  case ondemand::json_type::object: {
    ondemand::object object;
    if (simdjson::error_code code = value.get_object().get(object))
      return code;
    for (auto result : object) {
      ondemand::field field;
      std::string_view key;
      if (simdjson::error_code code = std::move(result).get(field))
        return code;
      if (simdjson::error_code code = field.unescaped_key().get(key))
        return code;
      if (simdjson::error_code code = validateValue(field.value()))
        return code;
    }
    return simdjson::SUCCESS;
  }
  case ondemand::json_type::array: {
    ondemand::array array;
    if (simdjson::error_code code = value.get_array().get(array))
      return code;
    for (auto result : array) {
      ondemand::value element;
      if (simdjson::error_code code = std::move(result).get(element))
        return code;
      if (simdjson::error_code code = validateValue(element))
        return code;
    }
    return simdjson::SUCCESS;
  }
  case ondemand::json_type::string: {
    std::string_view text;
    return value.get_string().get(text);
  }
  case ondemand::json_type::number: {
    double number = 0;
    return value.get_double().get(number);
  }
  case ondemand::json_type::boolean: {
    bool flag = false;
    return value.get_bool().get(flag);
  }
  case ondemand::json_type::null: {
    bool isNull = false;
    if (simdjson::error_code code = value.is_null().get(isNull))
      return code;
    return isNull ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
  }
  }
  return simdjson::TAPE_ERROR;
}

class IndexParser {
public:
  IndexParser(std::string_view text, size_t capacity, std::string_view fileName)
      : text_(text), fileName_(fileName) {
    if (capacity >= text.size() + simdjson::SIMDJSON_PADDING) {
      json_ = simdjson::padded_string_view(text.data(), text.size(), capacity);
    } else {
      copy_ = simdjson::padded_string(text.data(), text.size());
      json_ = copy_;
    }
  }

  Expected<SafetensorsIndex> parse();

private:
  bool parseWeightMap(ondemand::value value, size_t offset);
  /// Stores `entries` (in text order; `offsets` of their file values) into
  /// the index, files sorted by name and entries by key; a key given twice
  /// is an error.
  bool storeSorted(const std::vector<SafetensorsIndex::Entry> &entries,
                   const std::vector<size_t> &offsets);
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
    std::optional<JsonSyntaxError> syntax = findJsonSyntaxError(text_);
    if (!syntax)
      return std::nullopt;
    return failAt(jsonTokenStart(text_, syntax->offset),
                  "malformed JSON: " + syntax->message);
  }
  /// A value of the wrong type at `offset`; but simdjson reads an unquoted
  /// word (`"a": model.safetensors`) as a value of the wrong type too, so a
  /// syntax error comes first.
  Error wrongType(size_t offset, const std::string &what) const {
    if (std::optional<Error> error = syntaxError())
      return *error;
    return failAt(offset, what);
  }
  /// A JSON syntax error (or invalid UTF-8), located when nlohmann agrees.
  Error malformed(simdjson::error_code code) const {
    if (std::optional<Error> error = syntaxError())
      return *error;
    return fail(std::string("malformed JSON: ") +
                simdjson::error_message(code));
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
  simdjson::padded_string copy_;
  simdjson::padded_string_view json_;
  SafetensorsIndex index_;
  std::optional<Error> error_;
};

Expected<SafetensorsIndex> IndexParser::parse() {
  ondemand::parser parser;
  ondemand::document document;
  if (simdjson::error_code code = parser.iterate(json_).get(document))
    return code == simdjson::EMPTY ? fail("the index is empty")
                                   : malformed(code);
  ondemand::object root;
  if (simdjson::error_code code = document.get_object().get(root))
    return isWrongType(code) && !syntaxError()
               ? fail("the index is not a JSON object")
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
    } else if (simdjson::error_code code = validateValue(value)) {
      // Other fields are tolerated, but must be JSON.
      return malformed(code);
    }
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
                      ? wrongType(offset, "\"weight_map\" is not an object "
                                          "from tensor names to file names")
                      : malformed(code));
  // Large indexes hold 10^5 and more keys but few files: entries keep a
  // file id, keys share one buffer, and keys given twice are found by
  // sorting, not hashing.
  llvm::StringMap<uint32_t> fileIds;
  std::vector<SafetensorsIndex::Entry> entries;
  std::vector<size_t> offsets; // of each entry's file value, for messages
  // An entry takes about 90 bytes of text, half of it the key.
  entries.reserve(text_.size() / 64);
  offsets.reserve(text_.size() / 64);
  index_.keyBytes.reserve(text_.size() / 2);
  std::string_view lastFile;
  uint32_t lastFileId = 0;
  for (auto result : map) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code code = std::move(result).get(field))
      return reject(malformed(code));
    if (simdjson::error_code code = field.unescaped_key().get(key))
      return reject(malformed(code));
    ondemand::value fileValue = field.value();
    size_t at = offsetOf(fileValue.raw_json_token().data());
    std::string_view file;
    if (simdjson::error_code code = fileValue.get_string().get(file))
      return reject(isWrongType(code)
                        ? wrongType(at, "weight_map: the file of tensor " +
                                            quote(key) + " is not a string")
                        : malformed(code));
    if (entries.empty() || file != lastFile) {
      auto [slot, inserted] =
          fileIds.try_emplace(file, uint32_t(index_.files.size()));
      if (inserted) {
        if (!isSafeRelativePath(file))
          return reject(failAt(at,
                               "weight_map: tensor " + quote(key) + " is in " +
                                   quote(file) +
                                   ", which is not a file inside the "
                                   "index's directory",
                               "file names in an index are relative to its "
                               "directory, without '..'"));
        index_.files.push_back(std::string(file));
      }
      lastFile = slot->getKey();
      lastFileId = slot->second;
    }
    SafetensorsIndex::Entry entry;
    entry.keyOffset = index_.keyBytes.size();
    entry.keySize = uint32_t(key.size());
    entry.file = lastFileId;
    index_.keyBytes += key;
    entries.push_back(entry);
    offsets.push_back(at);
  }

  return storeSorted(entries, offsets);
}

bool IndexParser::storeSorted(
    const std::vector<SafetensorsIndex::Entry> &entries,
    const std::vector<size_t> &offsets) {
  // Files sorted, entries sorted by key (then by place in the text); an
  // index is usually sorted already (transformers writes sort_keys=True).
  std::vector<uint32_t> fileOrder(index_.files.size());
  std::iota(fileOrder.begin(), fileOrder.end(), 0u);
  std::sort(fileOrder.begin(), fileOrder.end(), [&](uint32_t a, uint32_t b) {
    return index_.files[a] < index_.files[b];
  });
  std::vector<uint32_t> newFileId(fileOrder.size());
  std::vector<std::string> files(fileOrder.size());
  for (uint32_t i = 0; i < fileOrder.size(); ++i) {
    newFileId[fileOrder[i]] = i;
    files[i] = std::move(index_.files[fileOrder[i]]);
  }
  index_.files = std::move(files);
  auto before = [&](uint32_t a, uint32_t b) {
    int compared = index_.key(entries[a]).compare(index_.key(entries[b]));
    return compared != 0 ? compared < 0 : a < b;
  };
  std::vector<uint32_t> order(entries.size());
  std::iota(order.begin(), order.end(), 0u);
  if (!std::is_sorted(order.begin(), order.end(), before))
    std::sort(order.begin(), order.end(), before);
  index_.weightMap.reserve(entries.size());
  for (size_t i = 0; i < order.size(); ++i) {
    SafetensorsIndex::Entry entry = entries[order[i]];
    entry.file = newFileId[entry.file];
    if (i > 0 && index_.key(index_.weightMap.back()) == index_.key(entry)) {
      const SafetensorsIndex::Entry &first = index_.weightMap.back();
      return reject(failAt(
          offsets[order[i]],
          "weight_map: tensor " + quote(index_.key(entry)) +
              " is listed twice (in " + quote(index_.files[first.file]) +
              " and in " + quote(index_.files[entry.file]) + ")",
          "a tensor is stored in one file; the index is damaged: fetch or "
          "copy it again"));
    }
    index_.weightMap.push_back(entry);
  }
  return true;
}

bool IndexParser::parseMetadata(ondemand::value value) {
  ondemand::object metadata;
  if (simdjson::error_code code = value.get_object().get(metadata)) {
    if (!isWrongType(code))
      return reject(malformed(code));
    code = validateValue(value);
    return code ? reject(malformed(code)) : true;
  }
  for (auto result : metadata) {
    ondemand::field field;
    std::string_view key;
    if (simdjson::error_code code = std::move(result).get(field))
      return reject(malformed(code));
    if (simdjson::error_code code = field.unescaped_key().get(key))
      return reject(malformed(code));
    ondemand::value entry = field.value();
    uint64_t size = 0;
    simdjson::error_code code =
        key == "total_size" ? entry.get_uint64().get(size) : simdjson::SUCCESS;
    if (key == "total_size" && !code)
      index_.totalSize = size;
    else if (key != "total_size" || isWrongType(code))
      code = validateValue(entry);
    if (code)
      return reject(malformed(code));
  }
  return true;
}

} // namespace

Expected<SafetensorsIndex> parseSafetensorsIndex(std::string_view text,
                                                 std::string_view fileName) {
  return IndexParser(text, 0, fileName).parse();
}

Expected<SafetensorsIndex>
parsePaddedSafetensorsIndex(std::string_view text, size_t capacity,
                            std::string_view fileName) {
  static_assert(kIndexTextPadding >= simdjson::SIMDJSON_PADDING);
  return IndexParser(text, capacity, fileName).parse();
}

} // namespace aoa::formats
