//===- MetadataTensors.cpp - The tensors of shard metadata ----------------===//
//
// A tensor's object: its dtype and global_shape, its shards (staged, see
// MetadataShards.cpp), the checks once the object has ended, and adding it
// to the builder. A tensor with errors is remembered by key only, so that a
// key given twice is reported with a note at its first place either way.
//
//===----------------------------------------------------------------------===//
#include "MetadataParser.h"

namespace aoa {

namespace metadatajson {

namespace {

/// Paddle spells dtypes `bfloat16`; other tools write `bf16` or `BF16`.
std::optional<DType> dtypeFromAlias(std::string_view name) {
  if (std::optional<DType> dtype = parseSafetensorsDTypeName(name))
    return dtype;
  static const std::pair<std::string_view, DType> kAliases[] = {
      {"bf16", DType::BF16},  {"fp16", DType::F16},  {"half", DType::F16},
      {"fp32", DType::F32},   {"float", DType::F32}, {"fp64", DType::F64},
      {"double", DType::F64}, {"int", DType::I32},   {"long", DType::I64}};
  for (const auto &[alias, dtype] : kAliases)
    if (alias == name)
      return dtype;
  return std::nullopt;
}

} // namespace

//===----------------------------------------------------------------------===//
// Reading tensors
//===----------------------------------------------------------------------===//

void MetadataParser::parseTensors(ondemand::value &value) {
  std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '{')
    return wrongType(value, "'tensors'", "an object mapping keys to tensors",
                     kFormatHint);
  ondemand::object tensors;
  if (simdjson::error_code code = value.get_object().get(tensors))
    return malformed(token.data(), code);
  for (auto result : tensors) {
    if (simdjson::error_code code = result.error())
      return malformed(nullptr, code);
    ondemand::field &field = result.value_unsafe();
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
  // Its slot in the key table arrives while the shards are read (a key's
  // first lookup is a cache miss in a table of a few MiB).
  builder_.prefetchKey(key);

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
    if (simdjson::error_code code = result.error())
      return malformed(nullptr, code);
    ondemand::field &field = result.value_unsafe();
    const char *fieldAt = field.key().raw() - 1;
    int index = fieldIndexOrReport<kTensorFields>(field, fieldAt, "a tensor");
    if (index >= 0 && firstTime(seen, index, fieldAt, kTensorFields[index])) {
      ondemand::value &fieldValue = field.value();
      switch (index) {
      case kDType:
        dtype = readDType(fieldValue);
        break;
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
  finishTensor(key, keyAt, dtype, globalShapeAt, seen, errorsBefore);
}

std::optional<DType> MetadataParser::readDType(ondemand::value &value) {
  std::string_view name;
  const char *at = value.raw_json_token().data();
  ReadResult read = readString(value, name);
  if (read == ReadResult::WrongType) {
    wrongType(value, "'dtype'", "a dtype name such as \"bfloat16\"",
              "dtypes: " + std::string(allDTypeNames()));
    return std::nullopt;
  }
  if (read != ReadResult::Ok)
    return std::nullopt;
  std::optional<DType> dtype = parseDTypeName(name);
  if (dtype)
    return dtype;
  std::optional<unsigned> subByte = subByteDTypeBitsByName(name);
  if (!subByte)
    subByte = subByteDTypeBits(name);
  if (subByte) {
    error(at, context() + "dtype " + quoteForMessage(name) + " (" +
                  std::to_string(*subByte) +
                  " bits per element) is not supported: aoa moves "
                  "only dtypes of whole bytes")
        .hint("sub-byte tensors (float4_e2m1fn, float6_e2m3fn, "
              "float6_e3m2fn) cannot be converted by aoa yet; leave "
              "them out of the metadata");
    return std::nullopt;
  }
  auto diag = error(at, context() + "unknown dtype " + quoteForMessage(name));
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
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Checking a tensor
//===----------------------------------------------------------------------===//

void MetadataParser::finishTensor(std::string_view key, const char *keyAt,
                                  std::optional<DType> dtype,
                                  const char *globalShapeAt, unsigned seen,
                                  unsigned errorsBefore) {
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
    if (count &&
        __builtin_mul_overflow(*count, int64_t(dtypeSize(*dtype)), &bytes))
      error(globalShapeAt,
            context() + "global_shape " + formatShape(globalShape_) + " of " +
                std::string(dtypeName(*dtype)) + " holds more than 2^63 bytes")
          .hint("check the extents");
  }
  if (errors_ == errorsBefore && dtype && !rejectedKeys_.find(key))
    commitTensor(key, keyAt, *dtype);
  else
    rejectTensor(key, keyAt);
}

bool MetadataParser::checkGlobalShape(const char *at) {
  for (size_t i = 0; i < globalShape_.size(); ++i)
    if (globalShape_[i] < 0) {
      error(at, context() + "global_shape " + formatShape(globalShape_) +
                    " has a negative extent in dimension " + std::to_string(i))
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

//===----------------------------------------------------------------------===//
// Committing or rejecting a tensor
//===----------------------------------------------------------------------===//

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

void MetadataParser::rejectTensor(std::string_view key, const char *keyAt) {
  if (earlierKey(key)) {
    reportDuplicate(key, keyAt);
    return;
  }
  rejectedKeys_.intern(key);
  rejectedKeyPlaces_.push_back(keyAt);
}

void MetadataParser::reportDuplicate(std::string_view key, const char *keyAt) {
  std::optional<const char *> first = earlierKey(key);
  auto diag = error(keyAt, "tensor " + quoteForMessage(key) + " appears twice");
  if (first)
    diag.note(locate(*first), "first given here");
  diag.hint("give each key once; merge the shards of both entries into one "
            "list");
}

std::optional<const char *>
MetadataParser::earlierKey(std::string_view key) const {
  if (std::optional<TensorId> id = builder_.find(key))
    return keyPlaces_[*id];
  if (std::optional<uint32_t> id = rejectedKeys_.find(key))
    return rejectedKeyPlaces_[*id];
  return std::nullopt;
}

} // namespace metadatajson

} // namespace aoa
