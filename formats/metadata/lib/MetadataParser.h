//===- MetadataParser.h - Reading one shard metadata document ---*- C++ -*-===//
//
// Private to formats/metadata. One forward pass of simdjson On-Demand over
// an aoa-metadata document, straight into a ShardMetadataBuilder. A tensor's
// fields may come in any order (its shards before its global_shape), so
// each tensor's shards are staged in reusable scratch arrays, checked once
// the tensor's object has ended, and only then copied into the builder.
//
// The parser is split over three files:
//  - MetadataParser.cpp: diagnostics, lists of integers, the root object;
//  - MetadataTensors.cpp: a tensor's fields and checks, adding it to the
//    builder, keys given twice;
//  - MetadataShards.cpp: a shard's fields, one function per field group,
//    and its checks against the tensor.
// MetadataLoader.cpp reads the file and holds the public entry points.
//
// The loops use each field or element in place (`value_unsafe()` once
// `error()` is clear) rather than copying it out with `get()`: that copy of
// simdjson's iterator stalled on store forwarding, 8% of the load.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_METADATA_LIB_METADATAPARSER_H
#define AOA_FORMATS_METADATA_LIB_METADATAPARSER_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/ShardMetadata.h"

#include <simdjson.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aoa {

namespace metadatajson {

namespace ondemand = simdjson::ondemand;

constexpr unsigned kMaxErrors = 20;
constexpr size_t kMaxDims = kDimensionLimit;

inline constexpr const char *kFormatHint =
    "shard metadata looks like {\"format\": \"aoa-metadata\", \"version\": 1, "
    "\"tensors\": {KEY: {\"dtype\": ..., \"global_shape\": [...], \"shards\": "
    "[...]}}}";

// Field names of each object level, in the order they are usually written.
inline constexpr std::array<std::string_view, 3> kRootFields = {
    "format", "version", "tensors"};
inline constexpr std::array<std::string_view, 3> kTensorFields = {
    "dtype", "global_shape", "shards"};
inline constexpr std::array<std::string_view, 7> kShardFields = {
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

/// A field name and its closing quote as two 8-byte words, and the masks of
/// their bytes, to compare with a key's text in place (field names are at
/// most 15 bytes).
struct FieldPattern {
  uint64_t words[2] = {0, 0};
  uint64_t masks[2] = {0, 0};

  explicit FieldPattern(std::string_view name) {
    char text[16] = {}, mask[16] = {};
    for (size_t i = 0; i <= name.size() && i < 16; ++i) {
      text[i] = i < name.size() ? name[i] : '"';
      mask[i] = char(0xFF);
    }
    std::memcpy(words, text, 16);
    std::memcpy(masks, mask, 16);
  }
  /// Whether the key text at `raw` (after its opening quote, followed by at
  /// least 16 readable bytes: simdjson's padding) is this name.
  bool matches(const char *raw) const {
    uint64_t a, b;
    std::memcpy(&a, raw, 8);
    std::memcpy(&b, raw + 8, 8);
    return ((a & masks[0]) == words[0]) & ((b & masks[1]) == words[1]);
  }
};

template <size_t N, size_t... I>
std::array<FieldPattern, N>
fieldPatterns(const std::array<std::string_view, N> &names,
              std::index_sequence<I...>) {
  return {FieldPattern(names[I])...};
}

template <size_t N>
std::array<FieldPattern, N>
fieldPatterns(const std::array<std::string_view, N> &names) {
  return fieldPatterns(names, std::make_index_sequence<N>());
}

template <size_t N>
constexpr bool fitFieldPatterns(const std::array<std::string_view, N> &names) {
  for (std::string_view name : names)
    if (name.empty() || name.size() > 15)
      return false;
  return true;
}

/// The index of `key` among `Names`, or -1. Runs millions of times per
/// file: each name is compared as two 8-byte words, the key read in place
/// (memcmp calls were 5% of the load). A key is inside the text, which is
/// followed by simdjson's padding: 16 bytes are readable from its start.
template <const auto &Names> int fieldIndex(ondemand::raw_json_string key) {
  static_assert(fitFieldPatterns(Names), "a field name over 15 bytes");
  static_assert(simdjson::SIMDJSON_PADDING >= 16);
  static const auto patterns = fieldPatterns(Names);
  for (size_t i = 0; i < patterns.size(); ++i)
    if (patterns[i].matches(key.raw()))
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

inline std::string_view trimTrailingSpace(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' ||
                            token.back() == '\n' || token.back() == '\r'))
    token.remove_suffix(1);
  return token;
}

/// A JSON string's text for a diagnostic, clipped so a huge value cannot
/// flood the terminal.
std::string quoteForMessage(std::string_view text);

/// What was read: the value, a value of another type (not consumed, so the
/// caller can describe it), or a JSON syntax error.
enum class ReadResult { Ok, WrongType, Malformed };

inline ReadResult readInt(ondemand::value &value, int64_t &out) {
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
  /// `threads` > 1: the keys may be sorted on two (ShardMetadataBuilder).
  MetadataParser(const std::string &path, std::string_view text,
                 SourceManager &sources, DiagnosticEngine &diags,
                 unsigned threads = 1)
      : path_(path), text_(text), sources_(sources), diags_(diags),
        discarded_(sources), threads_(threads) {}

  std::optional<ShardMetadata> parse();

private:
  //===--- Diagnostics (MetadataParser.cpp) ------------------------------===//

  /// The location of byte `at` of the text. The text is registered with the
  /// SourceManager at the first diagnostic that needs a location.
  SourceLocation locate(const char *at);
  /// "tensor 'K', shard 3: " for the object being read.
  std::string context() const;
  /// Reports an error; past the cap it reports "too many errors" once and
  /// stops the parse (further diagnostics go nowhere).
  InFlightDiagnostic error(const char *at, const std::string &message);
  /// A JSON syntax error: finds its exact place, reports it and stops.
  void malformed(const char *at, simdjson::error_code code);
  /// How a value of the wrong type reads in a message ("a string", "a list",
  /// "the number 1.5"); nullopt when the token is not valid JSON.
  std::optional<std::string> describe(ondemand::value &value);
  /// Reports `value` as having the wrong type for `what`; reports malformed
  /// JSON instead when the value is not even valid JSON.
  void wrongType(ondemand::value &value, std::string_view what,
                 const char *expected, const std::string &hint);
  /// The index among `known` of a key that fieldIndex did not find: one
  /// spelled with escapes. Otherwise reports the unknown field (at `keyAt`,
  /// with the closest known name) and returns -1. Consumes field.key().
  int escapedFieldIndex(ondemand::field &field, const char *keyAt,
                        const char *objectName,
                        const std::vector<std::string> &known,
                        const std::string &knownText);
  /// The index of `field`'s name among `Names` (fieldIndex, then
  /// escapedFieldIndex); -1 after reporting an unknown field.
  template <const auto &Names>
  int fieldIndexOrReport(ondemand::field &field, const char *fieldAt,
                         const char *objectName) {
    int index = fieldIndex<Names>(field.key());
    return index >= 0 ? index
                      : escapedFieldIndex(field, fieldAt, objectName,
                                          fieldList(Names), joinFields(Names));
  }
  /// Returns false (after reporting at `keyAt`) when `index` was already
  /// seen in this object.
  bool firstTime(unsigned &seen, int index, const char *keyAt,
                 std::string_view name);

  //===--- Reading values ------------------------------------------------===//

  // Strings without escapes (nearly all) are read in place from the input;
  // only keys and values with a backslash go through simdjson's unescaping.

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
  /// about `what`; false when there were any (MetadataParser.cpp).
  bool readIntList(ondemand::value &value, std::string_view what,
                   std::vector<int64_t> &out, const char *hint);

  //===--- The root object (MetadataParser.cpp) --------------------------===//

  /// Starts the document and steps into its root object; false after
  /// reporting why it cannot.
  bool openRoot(ondemand::parser &parser, ondemand::document &document,
                ondemand::object &root, const char *&rootAt);
  void readRootField(int index, ondemand::value &value);

  //===--- Tensors (MetadataTensors.cpp) ---------------------------------===//

  void parseTensors(ondemand::value &value);
  void parseTensor(std::string_view key, const char *keyAt,
                   ondemand::value &value);
  /// The dtype a tensor's "dtype" names, or nullopt after reporting.
  std::optional<DType> readDType(ondemand::value &value);
  /// Checks a tensor whose object has ended (`seen`: its fields), then
  /// commits or rejects it.
  void finishTensor(std::string_view key, const char *keyAt,
                    std::optional<DType> dtype, const char *globalShapeAt,
                    unsigned seen, unsigned errorsBefore);
  bool checkGlobalShape(const char *at);
  void commitTensor(std::string_view key, const char *keyAt, DType dtype);
  /// Remembers a tensor that had errors, for "appears twice" reports.
  void rejectTensor(std::string_view key, const char *keyAt);
  void reportDuplicate(std::string_view key, const char *keyAt);
  uint32_t fileId(uint32_t rank, std::string_view file);
  uint32_t nameId(std::string_view name);
  /// Where the key was first given, when it already was.
  std::optional<const char *> earlierKey(std::string_view key) const;

  //===--- Shards (MetadataShards.cpp) -----------------------------------===//

  void parseShards(ondemand::value &value);
  void parseShard(ondemand::value &value);
  void readShardField(int index, ondemand::value &value, ShardDraft &shard);
  void readShardRank(ondemand::value &value, ShardDraft &shard);
  /// "file" or "name".
  void readShardString(int index, ondemand::value &value, ShardDraft &shard);
  /// "global_offset" or "local_shape".
  void readShardBox(int index, ondemand::value &value, ShardDraft &shard);
  void readFlatRange(ondemand::value &value, ShardDraft &shard);
  void readContentHash(ondemand::value &value, ShardDraft &shard);
  bool checkShard(const ShardDraft &shard);
  /// Dimension counts and signs of the shard's offset and shape.
  bool checkShardDims(const ShardDraft &shard, llvm::ArrayRef<int64_t> offset,
                      llvm::ArrayRef<int64_t> shape);
  /// The shard's box lies within the global shape.
  bool checkShardInside(const ShardDraft &shard, llvm::ArrayRef<int64_t> offset,
                        llvm::ArrayRef<int64_t> shape);
  bool checkFlatRange(const ShardDraft &shard, llvm::ArrayRef<int64_t> offset,
                      llvm::ArrayRef<int64_t> shape);

  const std::string &path_;
  std::string_view text_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  /// Swallows diagnostics once the parse has stopped.
  DiagnosticEngine discarded_;
  unsigned threads_;
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

} // namespace metadatajson

} // namespace aoa

#endif // AOA_FORMATS_METADATA_LIB_METADATAPARSER_H
