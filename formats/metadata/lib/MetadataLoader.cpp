//===- MetadataLoader.cpp --------------------------------------------------===//
//
// One forward pass of simdjson On-Demand over the file. A tensor's fields may
// come in any order (its shards before its global_shape), so each tensor's
// shards are staged in reusable scratch arrays, checked once the tensor's
// object has ended, and only then copied into the builder.
//
// Strings without escapes (nearly all) are read in place from the input;
// only keys and values with a backslash go through simdjson's unescaping.
// Large files are memory-mapped rather than copied (as LLVM's MemoryBuffer
// does): on a 200 MB file that saves the copy and as many fresh pages.
//
// On a JSON syntax error the text is re-read by nlohmann's SAX parser (a slow
// path taken only on failure) for an exact position and a readable message.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/MetadataLoader.h"

#include "aoa/formats/json/JsonSyntaxError.h"

#include "aoa/ir/ContentHashText.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa {

namespace {

namespace ondemand = simdjson::ondemand;

constexpr unsigned kMaxErrors = 20;
constexpr size_t kMaxDims = 255;

const char *const kFormatHint =
    "shard metadata looks like {\"format\": \"aoa-metadata\", \"version\": 1, "
    "\"tensors\": {KEY: {\"dtype\": ..., \"global_shape\": [...], \"shards\": "
    "[...]}}}";

// Field names of each object level, in the order they are usually written.
constexpr std::array<std::string_view, 3> kRootFields = {"format", "version",
                                                         "tensors"};
constexpr std::array<std::string_view, 3> kTensorFields = {
    "dtype", "global_shape", "shards"};
constexpr std::array<std::string_view, 7> kShardFields = {
    "rank",        "file",       "name", "global_offset",
    "local_shape", "flat_range", "xxh3"};
enum RootField { kFormat, kVersion, kTensors };
enum TensorField { kDType, kGlobalShape, kShards };
enum ShardField {
  kRank,
  kFile,
  kName,
  kGlobalOffset,
  kLocalShape,
  kFlatRange,
  kXxh3
};

/// The index of `key` among `names`, or -1. Runs a million times per file:
/// only the names with the key's first letter are compared.
template <size_t N>
int fieldIndex(ondemand::raw_json_string key,
               const std::array<std::string_view, N> &names) {
  char first = key.raw()[0];
  for (size_t i = 0; i < N; ++i)
    if (names[i][0] == first && key.unsafe_is_equal(names[i]))
      return static_cast<int>(i);
  return -1;
}

template <size_t N>
std::vector<std::string> fieldList(const std::array<std::string_view, N> &a) {
  return std::vector<std::string>(a.begin(), a.end());
}

template <size_t N>
std::string joinFields(const std::array<std::string_view, N> &names) {
  std::string out;
  for (std::string_view name : names)
    out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string_view trimTrailingSpace(std::string_view token) {
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\t' ||
          token.back() == '\n' || token.back() == '\r'))
    token.remove_suffix(1);
  return token;
}

/// A JSON string's text for a diagnostic, clipped so a huge value cannot
/// flood the terminal.
std::string quoteForMessage(std::string_view text) {
  constexpr size_t kMaxShown = 200;
  if (text.size() > kMaxShown)
    return "'" + std::string(text.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(text) + "'";
}

/// Paddle spells dtypes `bfloat16`; other tools write `bf16` or `BF16`.
std::optional<DType> dtypeFromAlias(std::string_view name) {
  if (std::optional<DType> dtype = parseSafetensorsDTypeName(name))
    return dtype;
  static const std::pair<std::string_view, DType> kAliases[] = {
      {"bf16", DType::BF16}, {"fp16", DType::F16},  {"half", DType::F16},
      {"fp32", DType::F32},  {"float", DType::F32}, {"fp64", DType::F64},
      {"double", DType::F64}, {"int", DType::I32},  {"long", DType::I64}};
  for (const auto &[alias, dtype] : kAliases)
    if (alias == name)
      return dtype;
  return std::nullopt;
}

/// What was read: the value, a value of another type (not consumed, so the
/// caller can describe it), or a JSON syntax error.
enum class ReadResult { Ok, WrongType, Malformed };

ReadResult readInt(ondemand::value &value, int64_t &out) {
  simdjson::error_code error = value.get_int64().get(out);
  if (!error)
    return ReadResult::Ok;
  if (error == simdjson::INCORRECT_TYPE ||
      error == simdjson::NUMBER_OUT_OF_RANGE)
    return ReadResult::WrongType;
  return ReadResult::Malformed;
}

/// A shard as read, before it is checked against its tensor.
struct ShardDraft {
  int64_t rank = 0;
  std::string_view file;
  std::string_view name;
  /// global_offset and local_shape as [begin, begin + size) of the scratch
  /// coordinate array.
  uint32_t offsetBegin = 0, offsetSize = 0;
  uint32_t shapeBegin = 0, shapeSize = 0;
  FlatElementRange flatRange;
  bool hasFlatRange = false;
  uint64_t contentHash = 0;
  bool hasContentHash = false;
  bool valid = true;
  const char *at = nullptr;
  const char *offsetAt = nullptr;
  const char *shapeAt = nullptr;
  const char *flatRangeAt = nullptr;
};

class MetadataParser {
public:
  /// `text` must be followed by simdjson::SIMDJSON_PADDING readable bytes.
  MetadataParser(const std::string &path, std::string_view text,
                 SourceManager &sources, DiagnosticEngine &diags)
      : path_(path), text_(text), sources_(sources), diags_(diags),
        discarded_(sources) {}

  std::optional<ShardMetadata> parse();

private:
  //===--- Diagnostics ---------------------------------------------------===//

  /// The location of byte `at` of the text. The text is registered with the
  /// SourceManager at the first diagnostic that needs a location.
  SourceLocation locate(const char *at) {
    if (buffer_ == 0)
      buffer_ = sources_.addBuffer(path_, std::string(text_.data(),
                                                      text_.size()));
    size_t offset = at ? static_cast<size_t>(at - text_.data()) : 0;
    return sources_.locationForOffset(buffer_, std::min(offset, text_.size()));
  }

  /// "tensor 'K', shard 3: " for the object being read.
  std::string context() const {
    if (tensorKey_.empty() && shardIndex_ < 0)
      return "";
    std::string out = "tensor " + quoteForMessage(tensorKey_);
    if (shardIndex_ >= 0)
      out += ", shard " + std::to_string(shardIndex_);
    return out + ": ";
  }

  /// Reports an error; past the cap it reports "too many errors" once and
  /// stops the parse (further diagnostics go nowhere).
  InFlightDiagnostic error(const char *at, const std::string &message) {
    if (stopped_)
      return discarded_.error(SourceLocation{}, message);
    if (errors_ == kMaxErrors) {
      diags_
          .error(locate(at), "too many errors in metadata '" + path_ +
                                 "'; stopped after " +
                                 std::to_string(kMaxErrors))
          .hint("fix the errors above and load the file again");
      stopped_ = true;
      return discarded_.error(SourceLocation{}, message);
    }
    ++errors_;
    return diags_.error(locate(at), message);
  }

  /// A JSON syntax error: finds its exact place, reports it and stops.
  void malformed(const char *at, simdjson::error_code code) {
    if (stopped_)
      return;
    std::string message;
    if (std::optional<JsonSyntaxError> syntax = findJsonSyntaxError(text_)) {
      // Point at the start of the offending token.
      bool badLiteral =
          syntax->message.find("invalid literal") != std::string::npos;
      at = text_.data() + tokenStart(std::min(syntax->offset, text_.size()),
                                     badLiteral);
      message = syntax->message;
    } else {
      message = simdjson::error_message(code);
    }
    error(at, "malformed JSON in metadata: " + message).hint(kFormatHint);
    stopped_ = true;
  }

  /// The start of the JSON token whose last character is at `offset`. For
  /// an invalid literal (`tru}`) the character at `offset` is the one that
  /// broke it, and the literal is just before it.
  size_t tokenStart(size_t offset, bool badLiteral) const {
    auto isWordChar = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
             c == '-' || c == '+';
    };
    if (offset >= text_.size())
      return offset;
    if (badLiteral && offset > 0 && isWordChar(text_[offset - 1]))
      --offset;
    if (isWordChar(text_[offset])) {
      while (offset > 0 && isWordChar(text_[offset - 1]))
        --offset;
      return offset;
    }
    if (text_[offset] == '"') {
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

  /// How a value of the wrong type reads in a message ("a string", "a list",
  /// "the number 1.5"); nullopt when the token is not valid JSON.
  std::optional<std::string> describe(ondemand::value &value) {
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

  /// Reports `value` as having the wrong type for `what`; reports malformed
  /// JSON instead when the value is not even valid JSON.
  void wrongType(ondemand::value &value, std::string_view what,
                 const char *expected, const std::string &hint) {
    const char *at = value.raw_json_token().data();
    std::optional<std::string> description = describe(value);
    if (!description)
      return malformed(at, simdjson::TAPE_ERROR);
    error(at, context() + std::string(what) + " must be " + expected +
                  ", not " + *description)
        .hint(hint);
  }

  void unknownField(ondemand::field &field, const char *objectName,
                    const std::vector<std::string> &known,
                    const std::string &knownText) {
    const char *at = field.key().raw() - 1;
    std::string_view name;
    if (field.unescaped_key().get(name))
      return malformed(at, simdjson::STRING_ERROR);
    auto diag = error(at, context() + "unknown field " + quoteForMessage(name) +
                              " in " + objectName);
    std::string suggestion = closestSpelling(std::string(name), known);
    if (!suggestion.empty())
      diag.hint("did you mean '" + suggestion + "'?");
    else
      diag.hint(std::string("known fields of ") + objectName + ": " +
                knownText);
  }

  /// Returns false (after reporting) when `index` was already seen in this
  /// object.
  bool firstTime(unsigned &seen, int index, ondemand::field &field,
                 std::string_view name) {
    if (seen & (1u << index)) {
      error(field.key().raw() - 1,
            context() + "field '" + std::string(name) + "' appears twice")
          .hint("give each field once");
      return false;
    }
    seen |= 1u << index;
    return true;
  }

  //===--- Reading values ------------------------------------------------===//

  /// Reads a string in place when it has no escapes. WrongType leaves the
  /// value unconsumed.
  ReadResult readString(ondemand::value &value, std::string_view &out) {
    // The token runs from the opening quote to the next structural
    // character, so it is the string and its closing quote plus blanks.
    // (simdjson's first stage has already rejected raw control characters.)
    std::string_view token = trimTrailingSpace(value.raw_json_token());
    if (token.empty() || token[0] != '"')
      return ReadResult::WrongType;
    if (token.size() >= 2 && token.back() == '"') {
      std::string_view inner = token.substr(1, token.size() - 2);
      if (!std::memchr(inner.data(), '\\', inner.size())) {
        out = inner;
        return ReadResult::Ok;
      }
    }
    if (value.get_string().get(out)) {
      malformed(token.data(), simdjson::STRING_ERROR);
      return ReadResult::Malformed;
    }
    return ReadResult::Ok;
  }

  /// An object key, read in place when it has no escapes.
  bool readKey(ondemand::field &field, std::string_view &out) {
    const char *begin = field.key().raw();
    for (const char *p = begin;; ++p) {
      if (*p == '"') {
        out = std::string_view(begin, static_cast<size_t>(p - begin));
        return true;
      }
      if (*p == '\\')
        break;
    }
    if (field.unescaped_key().get(out)) {
      malformed(begin - 1, simdjson::STRING_ERROR);
      return false;
    }
    return true;
  }

  /// Reads a list of integers, appending them to `out`. Reports problems as
  /// about `what`; false when there were any.
  bool readIntList(ondemand::value &value, std::string_view what,
                   std::vector<int64_t> &out, const char *hint) {
    std::string_view token = value.raw_json_token();
    if (token.empty() || token[0] != '[') {
      wrongType(value, "'" + std::string(what) + "'", "a list of integers",
                hint);
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
      ondemand::value item;
      if (simdjson::error_code code = element.get(item)) {
        malformed(nullptr, code);
        return false;
      }
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

  //===--- The document --------------------------------------------------===//

  void parseTensors(ondemand::value &value);
  void parseTensor(std::string_view key, const char *keyAt,
                   ondemand::value &value);
  void parseShards(ondemand::value &value);
  void parseShard(ondemand::value &value);
  bool checkGlobalShape(const char *at);
  bool checkShard(const ShardDraft &shard);
  void commitTensor(std::string_view key, const char *keyAt, DType dtype);
  /// Remembers a tensor that had errors, for "appears twice" reports.
  void rejectTensor(std::string_view key, const char *keyAt);
  void reportDuplicate(std::string_view key, const char *keyAt);
  uint32_t fileId(uint32_t rank, std::string_view file);
  uint32_t nameId(std::string_view name);
  /// Where the key was first given, when it already was.
  std::optional<const char *> earlierKey(std::string_view key) const;

  const std::string &path_;
  std::string_view text_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  /// Swallows diagnostics once the parse has stopped.
  DiagnosticEngine discarded_;
  uint32_t buffer_ = 0;
  unsigned errors_ = 0;
  bool stopped_ = false;

  ShardMetadataBuilder builder_;
  /// Where each committed tensor's key is (by TensorId), and the keys of
  /// rejected tensors, for "appears twice" notes.
  std::vector<const char *> keyPlaces_;
  StringPool rejectedKeys_;
  std::vector<const char *> rejectedKeyPlaces_;
  /// Interning caches (see fileId, nameId).
  std::vector<std::pair<std::string_view, uint32_t>> lastFileOfRank_;
  std::string_view lastName_;
  uint32_t lastNameId_ = UINT32_MAX;

  // The tensor being read.
  std::string_view tensorKey_;
  long shardIndex_ = -1;
  std::vector<int64_t> globalShape_;
  std::vector<ShardDraft> shards_;
  std::vector<int64_t> coordinates_;
};

std::optional<const char *>
MetadataParser::earlierKey(std::string_view key) const {
  if (std::optional<TensorId> id = builder_.find(key))
    return keyPlaces_[*id];
  if (std::optional<uint32_t> id = rejectedKeys_.find(key))
    return rejectedKeyPlaces_[*id];
  return std::nullopt;
}

std::optional<ShardMetadata> MetadataParser::parse() {
  // Capacity from the file size (a shard takes about 200 bytes of JSON):
  // growing a hundred-megabyte model by doubling touches twice the memory.
  // Unused reserve is address space, not resident memory.
  size_t shards = text_.size() / 160;
  builder_.reserve(/*tensors=*/shards / 4, shards, /*coordinates=*/shards * 4);
  ondemand::parser parser;
  ondemand::document document;
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
    return std::nullopt;
  }

  ondemand::json_type type;
  if (simdjson::error_code code = document.type().get(type)) {
    malformed(text_.data(), code);
    return std::nullopt;
  }
  const char *rootAt = nullptr;
  if (document.current_location().get(rootAt))
    rootAt = text_.data();
  if (type != ondemand::json_type::object) {
    error(rootAt, "metadata must be a JSON object, not a " +
                      std::string(type == ondemand::json_type::array
                                      ? "list"
                                      : "scalar"))
        .hint(kFormatHint);
    return std::nullopt;
  }
  ondemand::object root;
  if (simdjson::error_code code = document.get_object().get(root)) {
    malformed(rootAt, code);
    return std::nullopt;
  }

  unsigned seen = 0;
  for (auto result : root) {
    ondemand::field field;
    if (simdjson::error_code code = std::move(result).get(field)) {
      malformed(nullptr, code);
      break;
    }
    int index = fieldIndex(field.key(), kRootFields);
    if (index < 0) {
      unknownField(field, "the metadata", fieldList(kRootFields),
                   joinFields(kRootFields));
      if (stopped_)
        break;
      continue;
    }
    if (!firstTime(seen, index, field, kRootFields[index]))
      continue;
    ondemand::value &value = field.value();
    switch (index) {
    case kFormat: {
      std::string_view format;
      ReadResult read = readString(value, format);
      if (read == ReadResult::WrongType)
        wrongType(value, "'format'", "the string \"aoa-metadata\"",
                  kFormatHint);
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
  return builder_.finish();
}

void MetadataParser::parseTensors(ondemand::value &value) {
  std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '{')
    return wrongType(value, "'tensors'", "an object mapping keys to tensors",
                     kFormatHint);
  ondemand::object tensors;
  if (simdjson::error_code code = value.get_object().get(tensors))
    return malformed(token.data(), code);
  for (auto result : tensors) {
    ondemand::field field;
    if (simdjson::error_code code = std::move(result).get(field))
      return malformed(nullptr, code);
    // Before readKey: unescaping a key consumes field.key().
    const char *keyAt = field.key().raw() - 1;
    std::string_view key;
    if (!readKey(field, key))
      return;
    parseTensor(key, keyAt, field.value());
    tensorKey_ = {};
    shardIndex_ = -1;
    if (stopped_)
      return;
  }
}

void MetadataParser::parseTensor(std::string_view key, const char *keyAt,
                                 ondemand::value &value) {
  tensorKey_ = key;
  shardIndex_ = -1;
  unsigned errorsBefore = errors_;

  std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '{') {
    wrongType(value, "a tensor",
              "an object with dtype, global_shape and shards", kFormatHint);
    rejectTensor(key, keyAt);
    return;
  }
  ondemand::object object;
  if (simdjson::error_code code = value.get_object().get(object))
    return malformed(token.data(), code);

  globalShape_.clear();
  shards_.clear();
  coordinates_.clear();
  std::optional<DType> dtype;
  const char *globalShapeAt = nullptr;
  unsigned seen = 0;
  for (auto result : object) {
    ondemand::field field;
    if (simdjson::error_code code = std::move(result).get(field))
      return malformed(nullptr, code);
    int index = fieldIndex(field.key(), kTensorFields);
    if (index < 0) {
      unknownField(field, "a tensor", fieldList(kTensorFields),
                   joinFields(kTensorFields));
    } else if (firstTime(seen, index, field, kTensorFields[index])) {
      ondemand::value &fieldValue = field.value();
      switch (index) {
      case kDType: {
        std::string_view name;
        const char *at = fieldValue.raw_json_token().data();
        ReadResult read = readString(fieldValue, name);
        if (read == ReadResult::WrongType) {
          wrongType(fieldValue, "'dtype'", "a dtype name such as \"bfloat16\"",
                    "dtypes: " + std::string(allDTypeNames()));
        } else if (read == ReadResult::Ok) {
          dtype = parseDTypeName(name);
          std::optional<unsigned> subByte = subByteDTypeBitsByName(name);
          if (!subByte)
            subByte = subByteDTypeBits(name);
          if (!dtype && subByte) {
            error(at, context() + "dtype " + quoteForMessage(name) + " (" +
                          std::to_string(*subByte) +
                          " bits per element) is not supported: aoa moves "
                          "only dtypes of whole bytes")
                .hint("sub-byte tensors (float4_e2m1fn, float6_e2m3fn, "
                      "float6_e3m2fn) cannot be converted by aoa yet; leave "
                      "them out of the metadata");
          } else if (!dtype) {
            auto diag = error(at, context() + "unknown dtype " +
                                      quoteForMessage(name));
            std::vector<std::string> names;
            for (DType d : kAllDTypes)
              names.emplace_back(dtypeName(d));
            std::string suggestion;
            if (std::optional<DType> alias = dtypeFromAlias(name))
              suggestion = std::string(dtypeName(*alias));
            else
              suggestion = closestSpelling(std::string(name), names);
            if (!suggestion.empty())
              diag.hint("did you mean '" + suggestion +
                        "'? (metadata uses Paddle's dtype names)");
            else
              diag.hint("dtypes: " + std::string(allDTypeNames()));
          }
        }
        break;
      }
      case kGlobalShape:
        globalShapeAt = fieldValue.raw_json_token().data();
        readIntList(fieldValue, "global_shape", globalShape_,
                    "global_shape lists the tensor's extents, e.g. "
                    "[1024, 512]");
        break;
      case kShards:
        parseShards(fieldValue);
        break;
      }
    }
    if (stopped_)
      return;
  }
  shardIndex_ = -1;

  for (int index : {kDType, kGlobalShape, kShards})
    if (!(seen & (1u << index)))
      error(keyAt, context() + "missing the field '" +
                       std::string(kTensorFields[index]) + "'")
          .hint("a tensor has \"dtype\", \"global_shape\" and \"shards\"");
  if (errors_ == errorsBefore && shards_.empty())
    error(keyAt, context() + "has no shards")
        .hint("list where the tensor's data is stored, or remove the key");

  if (errors_ == errorsBefore && checkGlobalShape(globalShapeAt)) {
    for (const ShardDraft &shard : shards_) {
      shardIndex_ = static_cast<long>(&shard - shards_.data());
      checkShard(shard);
      if (stopped_)
        return;
    }
    shardIndex_ = -1;
  }
  // Byte counts are int64 everywhere downstream: a tensor must fit.
  if (errors_ == errorsBefore && dtype) {
    std::optional<int64_t> count = elementCount(globalShape_);
    int64_t bytes = 0;
    if (count && __builtin_mul_overflow(*count, int64_t(dtypeSize(*dtype)),
                                        &bytes))
      error(globalShapeAt, context() + "global_shape " +
                               formatShape(globalShape_) + " of " +
                               std::string(dtypeName(*dtype)) +
                               " holds more than 2^63 bytes")
          .hint("check the extents");
  }
  if (errors_ == errorsBefore && dtype && !rejectedKeys_.find(key))
    commitTensor(key, keyAt, *dtype);
  else
    rejectTensor(key, keyAt);
}

void MetadataParser::rejectTensor(std::string_view key, const char *keyAt) {
  if (earlierKey(key)) {
    reportDuplicate(key, keyAt);
    return;
  }
  rejectedKeys_.intern(key);
  rejectedKeyPlaces_.push_back(keyAt);
}

void MetadataParser::parseShards(ondemand::value &value) {
  std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '[')
    return wrongType(value, "'shards'", "a list of shard objects",
                     "shards look like [{\"rank\": 0, \"file\": ..., \"name\": "
                     "..., \"global_offset\": [...], \"local_shape\": [...]}]");
  ondemand::array array;
  if (simdjson::error_code code = value.get_array().get(array))
    return malformed(token.data(), code);
  shardIndex_ = 0;
  for (auto element : array) {
    ondemand::value shard;
    if (simdjson::error_code code = element.get(shard))
      return malformed(nullptr, code);
    parseShard(shard);
    if (stopped_)
      return;
    ++shardIndex_;
  }
  shardIndex_ = -1;
}

void MetadataParser::parseShard(ondemand::value &value) {
  ShardDraft shard;
  std::string_view token = value.raw_json_token();
  shard.at = token.data();
  if (token.empty() || token[0] != '{') {
    wrongType(value, "a shard", "an object",
              "a shard looks like {\"rank\": 0, \"file\": ..., \"name\": ..., "
              "\"global_offset\": [...], \"local_shape\": [...]}");
    shard.valid = false;
    shards_.push_back(shard);
    return;
  }
  ondemand::object object;
  if (simdjson::error_code code = value.get_object().get(object))
    return malformed(token.data(), code);

  unsigned errorsBefore = errors_;
  unsigned seen = 0;
  for (auto result : object) {
    ondemand::field field;
    if (simdjson::error_code code = std::move(result).get(field))
      return malformed(nullptr, code);
    int index = fieldIndex(field.key(), kShardFields);
    if (index < 0) {
      unknownField(field, "a shard", fieldList(kShardFields),
                   joinFields(kShardFields));
      if (stopped_)
        return;
      continue;
    }
    if (!firstTime(seen, index, field, kShardFields[index]))
      continue;
    ondemand::value &fieldValue = field.value();
    switch (index) {
    case kRank: {
      const char *at = fieldValue.raw_json_token().data();
      ReadResult read = readInt(fieldValue, shard.rank);
      if (read == ReadResult::WrongType)
        wrongType(fieldValue, "'rank'", "a non-negative integer",
                  "rank is the process that stores the shard");
      else if (read == ReadResult::Malformed)
        malformed(at, simdjson::NUMBER_ERROR);
      else if (shard.rank < 0 || shard.rank >= kRankLimit)
        error(at, context() + "'rank' " + std::to_string(shard.rank) +
                      " is out of range")
            .hint("ranks are integers from 0 to " +
                  std::to_string(kRankLimit - 1));
      break;
    }
    case kFile:
    case kName: {
      std::string_view &text = index == kFile ? shard.file : shard.name;
      const char *at = fieldValue.raw_json_token().data();
      ReadResult read = readString(fieldValue, text);
      const char *hint = index == kFile
                             ? "file is the shard's file name, e.g. "
                               "\"rank00000.safetensors\""
                             : "name is the tensor's name inside the file";
      if (read == ReadResult::WrongType)
        wrongType(fieldValue, index == kFile ? "'file'" : "'name'", "a string",
                  hint);
      else if (read == ReadResult::Ok && text.empty())
        error(at, context() + (index == kFile ? "'file'" : "'name'") +
                      " is empty")
            .hint(hint);
      break;
    }
    case kGlobalOffset:
    case kLocalShape: {
      bool isOffset = index == kGlobalOffset;
      (isOffset ? shard.offsetAt : shard.shapeAt) =
          fieldValue.raw_json_token().data();
      size_t begin = coordinates_.size();
      readIntList(fieldValue, kShardFields[index], coordinates_,
                  isOffset ? "global_offset is where the shard starts in the "
                             "tensor, e.g. [256, 0]"
                           : "local_shape is the shard's extents, e.g. "
                             "[256, 512]");
      (isOffset ? shard.offsetBegin : shard.shapeBegin) =
          static_cast<uint32_t>(begin);
      (isOffset ? shard.offsetSize : shard.shapeSize) =
          static_cast<uint32_t>(coordinates_.size() - begin);
      break;
    }
    case kFlatRange: {
      shard.flatRangeAt = fieldValue.raw_json_token().data();
      const char *hint = "flat_range [a, b] stores elements a to b-1 of the "
                         "row-major flattening of the shard's box";
      size_t begin = coordinates_.size();
      if (!readIntList(fieldValue, "flat_range", coordinates_, hint))
        break;
      size_t count = coordinates_.size() - begin;
      if (count != 2) {
        error(shard.flatRangeAt,
              context() + "'flat_range' must have 2 entries [begin, end], "
                          "not " +
                  std::to_string(count))
            .hint(hint);
      } else {
        shard.flatRange = {coordinates_[begin], coordinates_[begin + 1]};
        shard.hasFlatRange = true;
      }
      coordinates_.resize(begin);
      break;
    }
    case kXxh3: {
      const char *at = fieldValue.raw_json_token().data();
      const char *hint = "xxh3 is the xxh3-64 hash (seed 0) of the stored "
                         "tensor's bytes as 16 hex digits, e.g. "
                         "\"2d06800538d394c2\"";
      std::string_view text;
      ReadResult read = readString(fieldValue, text);
      if (read == ReadResult::WrongType) {
        wrongType(fieldValue, "'xxh3'", "a string of 16 hex digits", hint);
      } else if (read == ReadResult::Ok) {
        if (std::optional<uint64_t> hash = parseContentHash(text)) {
          shard.contentHash = *hash;
          shard.hasContentHash = true;
        } else {
          error(at, context() + "'xxh3' " + quoteForMessage(text) +
                        " is not 16 hex digits")
              .hint(hint);
        }
      }
      break;
    }
    }
    if (stopped_)
      return;
  }

  for (int index : {kRank, kFile, kName, kGlobalOffset, kLocalShape})
    if (!(seen & (1u << index)))
      error(shard.at, context() + "missing the field '" +
                          std::string(kShardFields[index]) + "'")
          .hint("a shard has \"rank\", \"file\", \"name\", "
                "\"global_offset\" and \"local_shape\"");
  shard.valid = errors_ == errorsBefore;
  shards_.push_back(shard);
}

bool MetadataParser::checkGlobalShape(const char *at) {
  for (size_t i = 0; i < globalShape_.size(); ++i)
    if (globalShape_[i] < 0) {
      error(at, context() + "global_shape " + formatShape(globalShape_) +
                    " has a negative extent in dimension " +
                    std::to_string(i))
          .hint("extents are non-negative integers");
      return false;
    }
  if (!elementCount(globalShape_)) {
    error(at, context() + "global_shape " + formatShape(globalShape_) +
                  " has more than 2^63 elements")
        .hint("check the extents");
    return false;
  }
  return true;
}

bool MetadataParser::checkShard(const ShardDraft &shard) {
  if (!shard.valid)
    return false;
  llvm::ArrayRef<int64_t> offset(coordinates_.data() + shard.offsetBegin,
                                 shard.offsetSize);
  llvm::ArrayRef<int64_t> shape(coordinates_.data() + shard.shapeBegin,
                                shard.shapeSize);
  size_t ndim = globalShape_.size();
  auto global = [this] { return formatShape(globalShape_); };
  const char *dimsHint = "global_offset and local_shape have one entry per "
                         "dimension of global_shape";
  if (offset.size() != ndim) {
    error(shard.offsetAt, context() + "global_offset " + formatShape(offset) +
                              " has " + std::to_string(offset.size()) +
                              " dimensions but global_shape " + global() +
                              " has " + std::to_string(ndim))
        .hint(dimsHint);
    return false;
  }
  if (shape.size() != ndim) {
    error(shard.shapeAt, context() + "local_shape " + formatShape(shape) +
                             " has " + std::to_string(shape.size()) +
                             " dimensions but global_shape " + global() +
                             " has " + std::to_string(ndim))
        .hint(dimsHint);
    return false;
  }
  for (size_t i = 0; i < ndim; ++i) {
    if (offset[i] < 0) {
      error(shard.offsetAt, context() + "global_offset " + formatShape(offset) +
                                " is negative in dimension " +
                                std::to_string(i))
          .hint("offsets count elements from 0");
      return false;
    }
    if (shape[i] < 0) {
      error(shard.shapeAt, context() + "local_shape " + formatShape(shape) +
                               " has a negative extent in dimension " +
                               std::to_string(i))
          .hint("extents are non-negative integers");
      return false;
    }
  }
  for (size_t i = 0; i < ndim; ++i) {
    int64_t end;
    if (__builtin_add_overflow(offset[i], shape[i], &end) ||
        end > globalShape_[i]) {
      error(shard.at, context() + "elements " +
                          formatElementRange(offset, shape) +
                          " lie outside global_shape " + global() +
                          " (dimension " + std::to_string(i) + " ends at " +
                          (end > globalShape_[i]
                               ? std::to_string(end)
                               : std::string("an overflowing index")) +
                          " > " + std::to_string(globalShape_[i]) + ")")
          .hint("global_offset + local_shape must not exceed global_shape in "
                "any dimension");
      return false;
    }
  }
  if (shard.hasFlatRange) {
    // Within the global shape, so the volume cannot overflow.
    int64_t volume = elementCount(shape).value_or(0);
    FlatElementRange range = shard.flatRange;
    if (range.begin < range.end && range.begin >= 0 && range.end <= volume)
      return true;
    std::string rangeText = "flat_range [" + std::to_string(range.begin) +
                            ", " + std::to_string(range.end) + ")";
    std::string hint = "flat_range [a, b) indexes the row-major flattening "
                       "of the box; it needs 0 <= a < b <= " +
                       std::to_string(volume);
    if (range.begin == range.end)
      error(shard.flatRangeAt, context() + rangeText + " is empty")
          .hint("remove the shard, or give a range with a < b");
    else if (range.begin > range.end)
      error(shard.flatRangeAt,
            context() + rangeText + " ends before it begins")
          .hint(hint);
    else
      error(shard.flatRangeAt,
            context() + rangeText + " lies outside the " +
                std::to_string(volume) + " elements of the box " +
                formatElementRange(offset, shape))
          .hint(hint);
    return false;
  }
  return true;
}

void MetadataParser::commitTensor(std::string_view key, const char *keyAt,
                                  DType dtype) {
  std::optional<TensorId> id = builder_.addTensor(key, dtype, globalShape_);
  if (!id) {
    // The key was given before (checked here, once per tensor, rather than
    // up front: the builder's key table answers both questions).
    reportDuplicate(key, keyAt);
    return;
  }
  keyPlaces_.push_back(keyAt);
  // Shards usually name the tensor by its key: prime the name cache with it.
  lastName_ = key;
  lastNameId_ = builder_.keyNameId(*id);
  for (const ShardDraft &shard : shards_) {
    std::optional<FlatElementRange> range;
    if (shard.hasFlatRange)
      range = shard.flatRange;
    uint32_t rank = static_cast<uint32_t>(shard.rank);
    std::optional<ShardId> id = builder_.addShard(
        rank, fileId(rank, shard.file), nameId(shard.name),
        llvm::ArrayRef<int64_t>(coordinates_.data() + shard.offsetBegin,
                                shard.offsetSize),
        llvm::ArrayRef<int64_t>(coordinates_.data() + shard.shapeBegin,
                                shard.shapeSize),
        range);
    if (!id) {
      // The checks above make this unreachable; report rather than assert.
      error(shard.at, "internal error: cannot add a shard of tensor " +
                          quoteForMessage(key));
      return;
    }
    if (shard.hasContentHash)
      builder_.setContentHash(*id, shard.contentHash);
  }
}

uint32_t MetadataParser::fileId(uint32_t rank, std::string_view file) {
  // A rank writes few files (model, optimizer), and its shards come in runs:
  // remembering each rank's last file skips most hash lookups.
  constexpr uint32_t kCachedRanks = 1 << 16;
  if (rank >= kCachedRanks)
    return builder_.internFile(file);
  if (rank >= lastFileOfRank_.size())
    lastFileOfRank_.resize(rank + 1, {std::string_view(), UINT32_MAX});
  auto &[lastFile, lastId] = lastFileOfRank_[rank];
  if (lastId == UINT32_MAX || lastFile != file) {
    lastFile = file;
    lastId = builder_.internFile(file);
  }
  return lastId;
}

uint32_t MetadataParser::nameId(std::string_view name) {
  // The shards of a tensor usually share one in-file name.
  if (lastNameId_ == UINT32_MAX || lastName_ != name) {
    lastName_ = name;
    lastNameId_ = builder_.internName(name);
  }
  return lastNameId_;
}

void MetadataParser::reportDuplicate(std::string_view key, const char *keyAt) {
  std::optional<const char *> first = earlierKey(key);
  auto diag = error(keyAt, "tensor " + quoteForMessage(key) + " appears twice");
  if (first)
    diag.note(locate(*first), "first given here");
  diag.hint("give each key once; merge the shards of both entries into one "
            "list");
}

/// A file's bytes followed by simdjson's padding. A large file is mapped
/// when its last page has room for the padding (the kernel fills it with
/// zeros); otherwise it is read into a padded buffer. The file must not be
/// truncated while it is mapped, as for any mmap-based reader.
class PaddedFile {
public:
  PaddedFile() = default;
  PaddedFile(const PaddedFile &) = delete;
  PaddedFile &operator=(const PaddedFile &) = delete;
  ~PaddedFile() {
    if (mapping_)
      ::munmap(mapping_, size_);
  }

  /// Opens `path`; on failure returns the system's reason.
  std::optional<std::string> open(const std::string &path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return std::string(std::strerror(errno));
    std::optional<std::string> failure = load(fd);
    ::close(fd);
    return failure;
  }

  std::string_view text() const {
    if (mapping_)
      return std::string_view(static_cast<const char *>(mapping_), size_);
    return std::string_view(buffer_.data(), buffer_.size());
  }

private:
  std::optional<std::string> load(int fd) {
    struct stat st;
    if (::fstat(fd, &st) != 0)
      return std::string(std::strerror(errno));
    if (S_ISDIR(st.st_mode))
      return std::string("is a directory");
    size_t size = static_cast<size_t>(st.st_size);
    // Small files are cheaper to read; regular files only (a pipe cannot be
    // mapped, and its size says nothing).
    constexpr size_t kMapThreshold = 1 << 20;
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    if (S_ISREG(st.st_mode) && size >= kMapThreshold && size % page != 0 &&
        page - size % page >= simdjson::SIMDJSON_PADDING) {
      void *mapping = ::mmap(nullptr, size, PROT_READ,
                             MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (mapping != MAP_FAILED) {
        mapping_ = mapping;
        size_ = size;
        return std::nullopt;
      }
    }
    return readAll(fd, S_ISREG(st.st_mode) ? std::optional<size_t>(size)
                                           : std::nullopt);
  }

  /// Reads a regular file of `size` bytes straight into the padded buffer,
  /// anything else in chunks.
  std::optional<std::string> readAll(int fd, std::optional<size_t> size) {
    if (size) {
      buffer_ = simdjson::padded_string(*size);
      if (buffer_.data() == nullptr)
        return std::string("out of memory");
      size_t done = 0;
      while (done < *size) {
        ssize_t n = ::read(fd, buffer_.data() + done, *size - done);
        if (n < 0 && errno == EINTR)
          continue;
        if (n < 0)
          return std::string(std::strerror(errno));
        if (n == 0)
          return std::string("the file shrank while being read");
        done += static_cast<size_t>(n);
      }
      return std::nullopt;
    }
    std::string bytes;
    char chunk[1 << 16];
    for (;;) {
      ssize_t n = ::read(fd, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return std::string(std::strerror(errno));
      if (n == 0)
        break;
      bytes.append(chunk, static_cast<size_t>(n));
    }
    buffer_ = simdjson::padded_string(bytes.data(), bytes.size());
    if (buffer_.data() == nullptr)
      return std::string("out of memory");
    return std::nullopt;
  }

  void *mapping_ = nullptr;
  size_t size_ = 0;
  simdjson::padded_string buffer_;
};

} // namespace

std::optional<ShardMetadata> loadShardMetadata(const std::string &path,
                                               SourceManager &sources,
                                               DiagnosticEngine &diags) {
  PaddedFile file;
  if (std::optional<std::string> failure = file.open(path)) {
    diags
        .error(SourceLocation{},
               "cannot read metadata '" + path + "': " + *failure)
        .hint("pass the path of an aoa-metadata JSON file");
    return std::nullopt;
  }
  return MetadataParser(path, file.text(), sources, diags).parse();
}

std::optional<ShardMetadata> loadShardMetadataText(const std::string &path,
                                                   std::string_view text,
                                                   SourceManager &sources,
                                                   DiagnosticEngine &diags) {
  simdjson::padded_string padded(text.data(), text.size());
  return MetadataParser(path, std::string_view(padded.data(), padded.size()),
                        sources, diags)
      .parse();
}

} // namespace aoa
