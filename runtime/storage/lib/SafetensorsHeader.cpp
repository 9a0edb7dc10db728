//===- SafetensorsHeader.cpp ----------------------------------------------===//
//
// The header is parsed with simdjson's On-Demand API in one forward pass,
// which also validates UTF-8 and sees duplicate keys (a DOM would silently
// keep one of them). The first problem found is returned; a corrupt header
// rarely has only one, and the first is what a person needs to see.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/SafetensorsHeader.h"

#include "aoa/ir/Json.h"
#include "aoa/runtime/support/Messages.h"

#include <simdjson.h>

#include <algorithm>
#include <numeric>

namespace aoa::runtime {

namespace ondemand = simdjson::ondemand;

int64_t SafetensorsTensor::elementCount() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

bool SafetensorsHeader::addTensor(SafetensorsTensor tensor) {
  if (!index_.try_emplace(tensor.name, tensors_.size()).second)
    return false;
  tensors_.push_back(std::move(tensor));
  return true;
}

const SafetensorsTensor *SafetensorsHeader::find(std::string_view name) const {
  std::optional<size_t> index = indexOf(name);
  return index ? &tensors_[*index] : nullptr;
}

std::optional<size_t> SafetensorsHeader::indexOf(std::string_view name) const {
  auto it = index_.find(llvm::StringRef(name.data(), name.size()));
  if (it == index_.end())
    return std::nullopt;
  return it->second;
}

uint64_t SafetensorsHeader::dataSize() const {
  uint64_t end = 0;
  for (const SafetensorsTensor &tensor : tensors_)
    end = std::max(end, tensor.dataEnd);
  return end;
}

namespace {

const char *const kHeaderFormatHint =
    "a safetensors header looks like {\"NAME\": {\"dtype\": \"F32\", "
    "\"shape\": [2, 3], \"data_offsets\": [0, 24]}, \"__metadata__\": "
    "{\"KEY\": \"VALUE\"}}; the file is corrupt or was not written by a "
    "safetensors library: re-copy or re-save it";

bool isWrongValue(simdjson::error_code code) {
  return code == simdjson::INCORRECT_TYPE ||
         code == simdjson::NUMBER_OUT_OF_RANGE ||
         code == simdjson::NUMBER_ERROR;
}

bool isJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// Where the JSON value that starts the text ends (one past its closing
/// bracket), found by matching brackets outside strings; nullopt when the
/// text does not start with an object or array or its brackets do not
/// match, which the parser reports better.
std::optional<size_t> endOfTopLevelValue(std::string_view text) {
  size_t at = 0;
  while (at < text.size() && isJsonSpace(text[at]))
    ++at;
  std::string open;
  for (; at < text.size(); ++at) {
    char c = text[at];
    if (c == '"') {
      for (++at; at < text.size() && text[at] != '"'; ++at)
        if (text[at] == '\\')
          ++at;
      if (at >= text.size())
        return std::nullopt;
    } else if (c == '{' || c == '[') {
      open += c == '{' ? '}' : ']';
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != c)
        return std::nullopt;
      open.pop_back();
      if (open.empty())
        return at + 1;
    } else if (open.empty()) {
      return std::nullopt; // a scalar at the top: not a header
    }
  }
  return std::nullopt;
}

/// One parse of one header: the text, the limits, and the result so far.
/// The member functions that return bool return false after storing the
/// problem in error_.
class HeaderParser {
public:
  HeaderParser(std::string_view json, uint64_t dataSize,
               std::string_view fileName)
      : json_(json.data(), json.size()), dataSize_(dataSize),
        fileName_(fileName) {}

  Expected<SafetensorsHeader> parse();

private:
  bool parseEntry(std::string_view key, ondemand::field &field,
                  bool &sawMetadata);
  bool parseTensor(const std::string &name, ondemand::value value);
  bool parseMetadata(ondemand::value value);
  bool readField(simdjson::simdjson_result<ondemand::field> result,
                 ondemand::field &field, std::string_view &key);
  bool readExtents(ondemand::value value, const std::string &name,
                   std::string_view field, std::vector<uint64_t> &out);
  bool checkTensor(const SafetensorsTensor &tensor,
                   const std::vector<uint64_t> &shape,
                   const std::vector<uint64_t> &offsets, uint64_t bytes);
  bool checkOverlaps();

  Error fail(std::string what, std::string hint = kHeaderFormatHint) {
    return {storageMessage(fileName_, what), std::move(hint)};
  }
  Error failTensor(const std::string &name, const std::string &what,
                   std::string hint = kHeaderFormatHint) {
    return fail("tensor " + quoteName(name) + ": " + what, std::move(hint));
  }
  bool reject(Error error) {
    error_ = std::move(error);
    return false;
  }
  /// A value that could not be read: of the wrong type (`wrongValue`
  /// describes what it should be), or malformed JSON.
  bool rejectValue(simdjson::error_code code, Error wrongValue) {
    return reject(isWrongValue(code) ? std::move(wrongValue) : malformed(code));
  }
  /// A JSON syntax error (or invalid UTF-8), with the byte where simdjson
  /// stopped when it can tell.
  Error malformed(simdjson::error_code code) {
    std::string where;
    const char *at = nullptr;
    // A document that failed to start has no location to ask for, and one
    // that ends early is reported before the parse reaches its end.
    if (started_ && code != simdjson::INCOMPLETE_ARRAY_OR_OBJECT &&
        !document_.current_location().get(at) && at >= json_.data() &&
        at <= json_.data() + json_.size())
      where = " near byte " + std::to_string(at - json_.data());
    return fail("malformed JSON in the header" + where + ": " +
                simdjson::error_message(code));
  }

  /// Something other than padding after the header's object, at `at`.
  Error trailingBytes(size_t at) {
    return fail("unexpected bytes after the header's JSON object, at byte " +
                    std::to_string(at) + " of the header (file offset " +
                    std::to_string(at + 8) + ")",
                "a safetensors header is one JSON object, padded with spaces "
                "up to the header length; the file is corrupt or its header "
                "length is wrong: re-copy or re-save it");
  }

  simdjson::padded_string json_;
  uint64_t dataSize_;
  std::string_view fileName_;
  ondemand::parser parser_;
  ondemand::document document_;
  bool started_ = false;
  SafetensorsHeader header_;
  std::optional<Error> error_;
};

Expected<SafetensorsHeader> HeaderParser::parse() {
  // Bytes after the object would make the parser stop somewhere inside the
  // header ("document ended early" for an unbalanced quote or bracket), so
  // they are found first. The format pads a header with spaces up to its
  // length; those are whitespace after the object and stay accepted.
  std::string_view text(json_.data(), json_.size());
  if (std::optional<size_t> end = endOfTopLevelValue(text)) {
    size_t extra = *end;
    while (extra < text.size() && isJsonSpace(text[extra]))
      ++extra;
    if (extra < text.size())
      return trailingBytes(extra);
  }
  if (simdjson::error_code code = parser_.iterate(json_).get(document_)) {
    if (code == simdjson::EMPTY)
      return fail("the header is empty");
    return malformed(code);
  }
  started_ = true;
  ondemand::object root;
  if (simdjson::error_code code = document_.get_object().get(root))
    return code == simdjson::INCORRECT_TYPE
               ? fail("the header is not a JSON object")
               : malformed(code);

  bool sawMetadata = false;
  for (auto result : root) {
    ondemand::field field;
    std::string_view key;
    if (!readField(std::move(result), field, key) ||
        !parseEntry(key, field, sawMetadata))
      return *error_;
  }
  // simdjson 3.0 has no document::at_end(); past the end of the document
  // there is no current location.
  const char *trailing = nullptr;
  if (!document_.current_location().get(trailing))
    return trailingBytes(size_t(trailing - json_.data()));
  if (!checkOverlaps())
    return *error_;
  return std::move(header_);
}

bool HeaderParser::readField(simdjson::simdjson_result<ondemand::field> result,
                             ondemand::field &field, std::string_view &key) {
  simdjson::error_code code = std::move(result).get(field);
  if (!code)
    code = field.unescaped_key().get(key);
  return code ? reject(malformed(code)) : true;
}

/// One key of the root object: "__metadata__" or a tensor.
bool HeaderParser::parseEntry(std::string_view key, ondemand::field &field,
                              bool &sawMetadata) {
  std::string name(key);
  if (name == "__metadata__") {
    if (sawMetadata)
      return reject(fail("\"__metadata__\" appears twice in the header"));
    sawMetadata = true;
    return parseMetadata(field.value());
  }
  if (header_.find(name))
    return reject(failTensor(name, "the name appears twice in the header",
                             "tensor names in a safetensors file are unique; "
                             "the file was written by a broken tool: re-save "
                             "it"));
  return parseTensor(name, field.value());
}

bool HeaderParser::parseMetadata(ondemand::value value) {
  ondemand::object object;
  if (simdjson::error_code code = value.get_object().get(object))
    return rejectValue(code, fail("\"__metadata__\" must be an object "
                                  "mapping strings to strings"));
  SafetensorsMetadata metadata;
  for (auto result : object) {
    ondemand::field field;
    std::string_view key, text;
    if (!readField(std::move(result), field, key))
      return false;
    std::string keyText(key);
    if (simdjson::error_code code = field.value().get_string().get(text))
      return rejectValue(code,
                         fail("\"__metadata__\" entry " + quoteName(keyText) +
                              " is not a string (the format allows "
                              "only string values)"));
    metadata.emplace_back(std::move(keyText), std::string(text));
  }
  header_.setMetadata(std::move(metadata));
  return true;
}

bool HeaderParser::readExtents(ondemand::value value, const std::string &name,
                               std::string_view field,
                               std::vector<uint64_t> &out) {
  // The message is built only on failure: this runs twice per tensor.
  auto wrong = [&] {
    return failTensor(name, "'" + std::string(field) +
                                "' must be a list of non-negative integers");
  };
  ondemand::array array;
  if (simdjson::error_code code = value.get_array().get(array))
    return rejectValue(code, wrong());
  for (auto element : array) {
    uint64_t number = 0;
    if (simdjson::error_code code = element.get_uint64().get(number))
      return rejectValue(code, wrong());
    out.push_back(number);
  }
  return true;
}

bool HeaderParser::parseTensor(const std::string &name, ondemand::value value) {
  ondemand::object object;
  if (simdjson::error_code code = value.get_object().get(object))
    return rejectValue(code, failTensor(name, "the entry must be an object "
                                              "with 'dtype', 'shape' and "
                                              "'data_offsets'"));
  std::optional<DType> dtype;
  std::optional<std::vector<uint64_t>> shape, offsets;
  for (auto result : object) {
    ondemand::field field;
    std::string_view key;
    if (!readField(std::move(result), field, key))
      return false;
    bool repeated = (key == "dtype" && dtype) || (key == "shape" && shape) ||
                    (key == "data_offsets" && offsets);
    if (repeated)
      return reject(
          failTensor(name, "'" + std::string(key) + "' is given twice"));
    if (key == "dtype") {
      std::string_view text;
      if (simdjson::error_code code = field.value().get_string().get(text))
        return rejectValue(code, failTensor(name, "'dtype' must be a string"));
      dtype = parseSafetensorsDTypeName(text);
      if (std::optional<unsigned> bits = subByteDTypeBits(text))
        return reject(failTensor(
            name,
            "dtype " + quoteName(text) + " (" + std::to_string(*bits) +
                " bits per element) is not supported: aoa moves only "
                "dtypes of whole bytes",
            "sub-byte tensors (F4, F6_E2M3, F6_E3M2) cannot be converted "
            "by aoa yet; store them as U8 bytes, or leave them out of the "
            "conversion"));
      if (!dtype)
        return reject(failTensor(
            name, "unsupported dtype " + quoteName(text),
            std::string("supported dtypes are ") + kSupportedDTypeList +
                "; convert the checkpoint to one of them"));
    } else if (key == "shape") {
      if (!readExtents(field.value(), name, key, shape.emplace()))
        return false;
    } else if (key == "data_offsets") {
      if (!readExtents(field.value(), name, key, offsets.emplace()))
        return false;
    }
    // Other fields are ignored, as the official library does.
  }
  for (auto [present, field] : {std::pair(dtype.has_value(), "dtype"),
                                std::pair(shape.has_value(), "shape"),
                                std::pair(offsets.has_value(), "data_offsets")})
    if (!present)
      return reject(
          failTensor(name, std::string("the entry has no '") + field + "'"));

  SafetensorsTensor tensor;
  tensor.name = name;
  tensor.dtype = *dtype;
  // The byte size, checked for overflow as it is multiplied up.
  uint64_t bytes = dtypeSize(*dtype);
  for (uint64_t extent : *shape) {
    if (extent > uint64_t(INT64_MAX) ||
        (extent != 0 && bytes > UINT64_MAX / extent))
      return reject(failTensor(name, "shape " + formatExtents(*shape) +
                                         " is too large to address"));
    tensor.shape.push_back(static_cast<int64_t>(extent));
    bytes *= extent;
  }
  if (offsets->size() != 2)
    return reject(failTensor(name, "'data_offsets' must be [begin, end], "
                                   "not " +
                                       formatExtents(*offsets)));
  tensor.dataBegin = (*offsets)[0];
  tensor.dataEnd = (*offsets)[1];
  if (!checkTensor(tensor, *shape, *offsets, bytes))
    return false;
  header_.addTensor(std::move(tensor));
  return true;
}

/// The tensor's data range against the data section and its byte size.
bool HeaderParser::checkTensor(const SafetensorsTensor &tensor,
                               const std::vector<uint64_t> &shape,
                               const std::vector<uint64_t> &offsets,
                               uint64_t bytes) {
  std::string range = "data_offsets " + formatExtents(offsets);
  if (tensor.dataBegin > tensor.dataEnd)
    return reject(failTensor(tensor.name, range + " end before they begin"));
  if (tensor.dataEnd > dataSize_)
    return reject(failTensor(
        tensor.name,
        range + " end past the data section, which holds " +
            std::to_string(dataSize_) + " bytes",
        "the file is probably truncated (an interrupted copy, download or "
        "save); re-copy or re-save it"));
  if (tensor.byteSize() != bytes)
    return reject(failTensor(
        tensor.name, range + " hold " + std::to_string(tensor.byteSize()) +
                         " bytes, but shape " + formatExtents(shape) + " of " +
                         std::string(safetensorsDTypeName(tensor.dtype)) +
                         " needs " + std::to_string(bytes)));
  return true;
}

bool HeaderParser::checkOverlaps() {
  llvm::ArrayRef<SafetensorsTensor> tensors = header_.tensors();
  std::vector<size_t> order;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].byteSize() != 0)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(tensors[a].dataBegin, tensors[a].dataEnd) <
           std::pair(tensors[b].dataBegin, tensors[b].dataEnd);
  });
  // Sorted by begin, a tensor overlaps some earlier one exactly when it
  // begins before the furthest end so far.
  size_t furthest = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const SafetensorsTensor &tensor = tensors[order[k]];
    if (k > 0 && tensor.dataBegin < tensors[furthest].dataEnd) {
      const SafetensorsTensor &other = tensors[furthest];
      return reject(fail("tensors " + quoteName(other.name) + " (bytes " +
                         formatByteRange(other.dataBegin, other.dataEnd) +
                         ") and " + quoteName(tensor.name) + " (bytes " +
                         formatByteRange(tensor.dataBegin, tensor.dataEnd) +
                         ") overlap in the data section"));
    }
    if (k == 0 || tensor.dataEnd > tensors[furthest].dataEnd)
      furthest = order[k];
  }
  return true;
}

} // namespace

Expected<SafetensorsHeader> parseSafetensorsHeader(std::string_view json,
                                                   uint64_t dataSize,
                                                   std::string_view fileName) {
  return HeaderParser(json, dataSize, fileName).parse();
}

std::string serializeSafetensorsHeader(const SafetensorsHeader &header) {
  std::string out = "{";
  if (!header.metadata().empty()) {
    out += "\"__metadata__\":{";
    for (const auto &[key, value] : header.metadata()) {
      if (out.back() != '{')
        out += ',';
      appendJsonString(out, key);
      out += ':';
      appendJsonString(out, value);
    }
    out += '}';
  }
  for (const SafetensorsTensor &tensor : header.tensors()) {
    if (out.back() != '{')
      out += ',';
    appendJsonString(out, tensor.name);
    out += ":{\"dtype\":\"";
    out += safetensorsDTypeName(tensor.dtype);
    out += "\",\"shape\":[";
    for (size_t i = 0; i < tensor.shape.size(); ++i)
      out += (i ? "," : "") + std::to_string(tensor.shape[i]);
    out += "],\"data_offsets\":[" + std::to_string(tensor.dataBegin) + "," +
           std::to_string(tensor.dataEnd) + "]}";
  }
  out += '}';
  out.append((8 - out.size() % 8) % 8, ' ');
  return out;
}

std::string encodeSafetensorsHeaderLength(uint64_t size) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((size >> (8 * i)) & 0xFF);
  return bytes;
}

} // namespace aoa::runtime
