//===- MetadataParser.cpp - Diagnostics and the root of metadata ----------===//
//
// The shard metadata parser's diagnostics, its reader of integer lists, and
// the root object (format, version, tensors); tensors and shards are in
// MetadataTensors.cpp and MetadataShards.cpp.
//
// On a JSON syntax error the text is re-read by nlohmann's SAX parser (a slow
// path taken only on failure) for an exact position and a readable message.
//
//===----------------------------------------------------------------------===//
#include "MetadataParser.h"

#include "aoa/formats/json/JsonSyntaxError.h"

#include <algorithm>

namespace aoa {

namespace metadatajson {

std::string quoteForMessage(std::string_view text) {
  constexpr size_t kMaxShown = 200;
  if (text.size() > kMaxShown)
    return "'" + std::string(text.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(text) + "'";
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

SourceLocation MetadataParser::locate(const char *at) {
  if (buffer_ == 0)
    buffer_ =
        sources_.addBuffer(path_, std::string(text_.data(), text_.size()));
  size_t offset = at ? static_cast<size_t>(at - text_.data()) : 0;
  return sources_.locationForOffset(buffer_, std::min(offset, text_.size()));
}

std::string MetadataParser::context() const {
  if (tensorKey_.empty() && shardIndex_ < 0)
    return "";
  std::string out = "tensor " + quoteForMessage(tensorKey_);
  if (shardIndex_ >= 0)
    out += ", shard " + std::to_string(shardIndex_);
  return out + ": ";
}

InFlightDiagnostic MetadataParser::error(const char *at,
                                         const std::string &message) {
  if (stopped_)
    return discarded_.error(SourceLocation{}, message);
  if (errors_ == kMaxErrors) {
    diags_
        .error(locate(at), "too many errors in metadata '" + path_ +
                               "'; stopped after " + std::to_string(kMaxErrors))
        .hint("fix the errors above and load the file again");
    stopped_ = true;
    return discarded_.error(SourceLocation{}, message);
  }
  ++errors_;
  return diags_.error(locate(at), message);
}

void MetadataParser::malformed(const char *at, simdjson::error_code code) {
  if (stopped_)
    return;
  std::string message;
  if (std::optional<JsonSyntaxError> syntax = findJsonSyntaxError(text_)) {
    // Point at the start of the offending token.
    bool badLiteral =
        syntax->message.find("invalid literal") != std::string::npos;
    at = text_.data() + jsonTokenStart(text_,
                                       std::min(syntax->offset, text_.size()),
                                       badLiteral);
    message = syntax->message;
  } else {
    message = simdjson::error_message(code);
  }
  error(at, "malformed JSON in metadata: " + message).hint(kFormatHint);
  stopped_ = true;
}

std::optional<std::string> MetadataParser::describe(ondemand::value &value) {
  std::string_view token = trimTrailingSpace(value.raw_json_token());
  if (token.empty())
    return std::nullopt;
  switch (token[0]) {
  case '"':
    return std::string("a string");
  case '[':
    return std::string("a list");
  case '{':
    return std::string("an object");
  case 't':
  case 'f':
  case 'n':
    if (token == "true" || token == "false" || token == "null")
      return std::string(token);
    return std::nullopt;
  default: {
    double number;
    simdjson::error_code error = value.get_double().get(number);
    if (error && error != simdjson::NUMBER_OUT_OF_RANGE)
      return std::nullopt;
    return "the number " + std::string(token.substr(0, 40));
  }
  }
}

void MetadataParser::wrongType(ondemand::value &value, std::string_view what,
                               const char *expected, const std::string &hint) {
  const char *at = value.raw_json_token().data();
  std::optional<std::string> description = describe(value);
  if (!description)
    return malformed(at, simdjson::TAPE_ERROR);
  error(at, context() + std::string(what) + " must be " + expected + ", not " +
                *description)
      .hint(hint);
}

int MetadataParser::escapedFieldIndex(ondemand::field &field, const char *keyAt,
                                      const char *objectName,
                                      const std::vector<std::string> &known,
                                      const std::string &knownText) {
  std::string_view name;
  if (field.unescaped_key().get(name)) {
    malformed(keyAt, simdjson::STRING_ERROR);
    return -1;
  }
  // A name spelled with escapes ("r\u0061nk") is that name.
  for (size_t i = 0; i < known.size(); ++i)
    if (name == known[i])
      return static_cast<int>(i);
  auto diag = error(keyAt, context() + "unknown field " +
                               quoteForMessage(name) + " in " + objectName);
  std::string suggestion = closestSpelling(std::string(name), known);
  if (!suggestion.empty())
    diag.hint("did you mean '" + suggestion + "'?");
  else
    diag.hint(std::string("known fields of ") + objectName + ": " + knownText);
  return -1;
}

bool MetadataParser::firstTime(unsigned &seen, int index, const char *keyAt,
                               std::string_view name) {
  if (seen & (1u << index)) {
    error(keyAt, context() + "field '" + std::string(name) + "' appears twice")
        .hint("give each field once");
    return false;
  }
  seen |= 1u << index;
  return true;
}

//===----------------------------------------------------------------------===//
// Lists of integers
//===----------------------------------------------------------------------===//

bool MetadataParser::readIntList(ondemand::value &value, std::string_view what,
                                 std::vector<int64_t> &out, const char *hint) {
  std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '[') {
    wrongType(value, "'" + std::string(what) + "'", "a list of integers", hint);
    return false;
  }
  ondemand::array array;
  if (simdjson::error_code code = value.get_array().get(array)) {
    malformed(token.data(), code);
    return false;
  }
  bool ok = true;
  size_t index = 0;
  size_t begin = out.size();
  for (auto element : array) {
    if (simdjson::error_code code = element.error()) {
      malformed(nullptr, code);
      return false;
    }
    ondemand::value &item = element.value_unsafe();
    int64_t number = 0;
    switch (readInt(item, number)) {
    case ReadResult::Ok:
      out.push_back(number);
      break;
    case ReadResult::WrongType:
      wrongType(item, std::string(what) + "[" + std::to_string(index) + "]",
                "an integer", hint);
      ok = false;
      break;
    case ReadResult::Malformed:
      malformed(item.raw_json_token().data(), simdjson::NUMBER_ERROR);
      return false;
    }
    if (stopped_)
      return false;
    ++index;
  }
  if (ok && out.size() - begin > kMaxDims) {
    error(token.data(), context() + "'" + std::string(what) + "' has " +
                            std::to_string(out.size() - begin) +
                            " entries; at most " + std::to_string(kMaxDims) +
                            " dimensions are supported")
        .hint(hint);
    ok = false;
  }
  return ok;
}

//===----------------------------------------------------------------------===//
// The root object
//===----------------------------------------------------------------------===//

std::optional<ShardMetadata> MetadataParser::parse() {
  // Capacity from the file size (a shard takes about 200 bytes of JSON):
  // growing a hundred-megabyte model by doubling touches twice the memory.
  // Unused reserve is address space, not resident memory.
  size_t shards = text_.size() / 160;
  builder_.reserve(/*tensors=*/shards / 4, shards, /*coordinates=*/shards * 4);
  ondemand::parser parser;
  ondemand::document document;
  ondemand::object root;
  const char *rootAt = nullptr;
  if (!openRoot(parser, document, root, rootAt))
    return std::nullopt;

  unsigned seen = 0;
  for (auto result : root) {
    if (simdjson::error_code code = result.error()) {
      malformed(nullptr, code);
      break;
    }
    ondemand::field &field = result.value_unsafe();
    const char *fieldAt = field.key().raw() - 1;
    int index = fieldIndexOrReport<kRootFields>(field, fieldAt, "the metadata");
    if (index < 0) {
      if (stopped_)
        break;
      continue;
    }
    if (!firstTime(seen, index, fieldAt, kRootFields[index]))
      continue;
    readRootField(index, field.value());
    if (stopped_)
      break;
  }
  if (stopped_)
    return std::nullopt;
  // simdjson 3.0 has no document::at_end(); past the end there is no
  // current location.
  const char *trailing = nullptr;
  if (!document.current_location().get(trailing)) {
    malformed(trailing, simdjson::TRAILING_CONTENT);
    return std::nullopt;
  }
  for (int index : {kFormat, kVersion, kTensors})
    if (!(seen & (1u << index)))
      error(rootAt, "metadata is missing the field '" +
                        std::string(kRootFields[index]) + "'")
          .hint(kFormatHint);
  if (errors_ != 0 || stopped_)
    return std::nullopt;
  return builder_.finish(threads_);
}

bool MetadataParser::openRoot(ondemand::parser &parser,
                              ondemand::document &document,
                              ondemand::object &root, const char *&rootAt) {
  if (simdjson::error_code code =
          parser
              .iterate(simdjson::padded_string_view(
                  text_.data(), text_.size(),
                  text_.size() + simdjson::SIMDJSON_PADDING))
              .get(document)) {
    if (code == simdjson::EMPTY)
      error(text_.data(), "metadata file is empty").hint(kFormatHint);
    else if (code == simdjson::CAPACITY)
      error(text_.data(), "metadata file is too large for one document "
                          "(simdjson reads at most 4 GiB)")
          .hint("split the metadata into several files");
    else
      malformed(text_.data(), code);
    return false;
  }

  ondemand::json_type type;
  if (simdjson::error_code code = document.type().get(type)) {
    malformed(text_.data(), code);
    return false;
  }
  if (document.current_location().get(rootAt))
    rootAt = text_.data();
  if (type != ondemand::json_type::object) {
    error(
        rootAt,
        "metadata must be a JSON object, not a " +
            std::string(type == ondemand::json_type::array ? "list" : "scalar"))
        .hint(kFormatHint);
    return false;
  }
  if (simdjson::error_code code = document.get_object().get(root)) {
    malformed(rootAt, code);
    return false;
  }
  return true;
}

void MetadataParser::readRootField(int index, ondemand::value &value) {
  switch (index) {
  case kFormat: {
    std::string_view format;
    ReadResult read = readString(value, format);
    if (read == ReadResult::WrongType)
      wrongType(value, "'format'", "the string \"aoa-metadata\"", kFormatHint);
    else if (read == ReadResult::Ok && format != "aoa-metadata")
      error(value.raw_json_token().data(),
            "unsupported metadata format " + quoteForMessage(format))
          .hint("this is not aoa shard metadata; its \"format\" must be "
                "\"aoa-metadata\"");
    break;
  }
  case kVersion: {
    int64_t version = 0;
    const char *at = value.raw_json_token().data();
    ReadResult read = readInt(value, version);
    if (read == ReadResult::WrongType)
      wrongType(value, "'version'", "the integer 1", kFormatHint);
    else if (read == ReadResult::Malformed)
      malformed(at, simdjson::NUMBER_ERROR);
    else if (version != 1)
      error(at, "unsupported metadata version " + std::to_string(version))
          .hint("this build reads aoa-metadata version 1");
    break;
  }
  case kTensors:
    parseTensors(value);
    break;
  }
}

} // namespace metadatajson

} // namespace aoa
