//===- MetadataShards.cpp - The shards of shard metadata ------------------===//
//
// A shard's object, read into a ShardDraft one field group at a time (rank,
// file and name, the box, flat_range, xxh3), and its checks against the
// tensor's global_shape, which run once the tensor's object has ended (the
// shards may come before the global_shape).
//
//===----------------------------------------------------------------------===//
#include "MetadataParser.h"

#include "aoa/ir/ContentHashText.h"

namespace aoa {

namespace metadatajson {

//===----------------------------------------------------------------------===//
// Reading shards
//===----------------------------------------------------------------------===//

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
    if (simdjson::error_code code = element.error())
      return malformed(nullptr, code);
    ondemand::value &shard = element.value_unsafe();
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
    if (simdjson::error_code code = result.error())
      return malformed(nullptr, code);
    ondemand::field &field = result.value_unsafe();
    const char *fieldAt = field.key().raw() - 1;
    int index = fieldIndexOrReport<kShardFields>(field, fieldAt, "a shard");
    if (index < 0) {
      if (stopped_)
        return;
      continue;
    }
    if (!firstTime(seen, index, fieldAt, kShardFields[index]))
      continue;
    readShardField(index, field.value(), shard);
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

void MetadataParser::readShardField(int index, ondemand::value &value,
                                    ShardDraft &shard) {
  switch (index) {
  case kRank:
    return readShardRank(value, shard);
  case kFile:
  case kName:
    return readShardString(index, value, shard);
  case kGlobalOffset:
  case kLocalShape:
    return readShardBox(index, value, shard);
  case kFlatRange:
    return readFlatRange(value, shard);
  case kXxh3:
    return readContentHash(value, shard);
  }
}

void MetadataParser::readShardRank(ondemand::value &value, ShardDraft &shard) {
  const char *at = value.raw_json_token().data();
  ReadResult read = readInt(value, shard.rank);
  if (read == ReadResult::WrongType)
    wrongType(value, "'rank'", "a non-negative integer",
              "rank is the process that stores the shard");
  else if (read == ReadResult::Malformed)
    malformed(at, simdjson::NUMBER_ERROR);
  else if (shard.rank < 0 || shard.rank >= kRankLimit)
    error(at, context() + "'rank' " + std::to_string(shard.rank) +
                  " is out of range")
        .hint("ranks are integers from 0 to " + std::to_string(kRankLimit - 1));
}

void MetadataParser::readShardString(int index, ondemand::value &value,
                                     ShardDraft &shard) {
  std::string_view &text = index == kFile ? shard.file : shard.name;
  const char *at = value.raw_json_token().data();
  ReadResult read = readString(value, text);
  const char *hint = index == kFile
                         ? "file is the shard's file name, e.g. "
                           "\"rank00000.safetensors\""
                         : "name is the tensor's name inside the file";
  if (read == ReadResult::WrongType)
    wrongType(value, index == kFile ? "'file'" : "'name'", "a string", hint);
  else if (read == ReadResult::Ok && text.empty())
    error(at, context() + (index == kFile ? "'file'" : "'name'") + " is empty")
        .hint(hint);
}

void MetadataParser::readShardBox(int index, ondemand::value &value,
                                  ShardDraft &shard) {
  bool isOffset = index == kGlobalOffset;
  (isOffset ? shard.offsetAt : shard.shapeAt) = value.raw_json_token().data();
  size_t begin = coordinates_.size();
  readIntList(value, kShardFields[index], coordinates_,
              isOffset ? "global_offset is where the shard starts in the "
                         "tensor, e.g. [256, 0]"
                       : "local_shape is the shard's extents, e.g. "
                         "[256, 512]");
  (isOffset ? shard.offsetBegin : shard.shapeBegin) =
      static_cast<uint32_t>(begin);
  (isOffset ? shard.offsetSize : shard.shapeSize) =
      static_cast<uint32_t>(coordinates_.size() - begin);
}

void MetadataParser::readFlatRange(ondemand::value &value, ShardDraft &shard) {
  shard.flatRangeAt = value.raw_json_token().data();
  const char *hint = "flat_range [a, b] stores elements a to b-1 of the "
                     "row-major flattening of the shard's box";
  size_t begin = coordinates_.size();
  if (!readIntList(value, "flat_range", coordinates_, hint))
    return;
  size_t count = coordinates_.size() - begin;
  if (count != 2) {
    error(shard.flatRangeAt, context() +
                                 "'flat_range' must have 2 entries [begin, "
                                 "end], not " +
                                 std::to_string(count))
        .hint(hint);
  } else {
    shard.flatRange = {coordinates_[begin], coordinates_[begin + 1]};
    shard.hasFlatRange = true;
  }
  coordinates_.resize(begin);
}

void MetadataParser::readContentHash(ondemand::value &value,
                                     ShardDraft &shard) {
  const char *at = value.raw_json_token().data();
  const char *hint = "xxh3 is the xxh3-64 hash (seed 0) of the stored "
                     "tensor's bytes as 16 hex digits, e.g. "
                     "\"2d06800538d394c2\"";
  std::string_view text;
  ReadResult read = readString(value, text);
  if (read == ReadResult::WrongType) {
    wrongType(value, "'xxh3'", "a string of 16 hex digits", hint);
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
}

//===----------------------------------------------------------------------===//
// Checking a shard against its tensor
//===----------------------------------------------------------------------===//

bool MetadataParser::checkShard(const ShardDraft &shard) {
  if (!shard.valid)
    return false;
  llvm::ArrayRef<int64_t> offset(coordinates_.data() + shard.offsetBegin,
                                 shard.offsetSize);
  llvm::ArrayRef<int64_t> shape(coordinates_.data() + shard.shapeBegin,
                                shard.shapeSize);
  if (!checkShardDims(shard, offset, shape) ||
      !checkShardInside(shard, offset, shape))
    return false;
  if (shard.hasFlatRange)
    return checkFlatRange(shard, offset, shape);
  return true;
}

bool MetadataParser::checkShardDims(const ShardDraft &shard,
                                    llvm::ArrayRef<int64_t> offset,
                                    llvm::ArrayRef<int64_t> shape) {
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
  return true;
}

bool MetadataParser::checkShardInside(const ShardDraft &shard,
                                      llvm::ArrayRef<int64_t> offset,
                                      llvm::ArrayRef<int64_t> shape) {
  for (size_t i = 0; i < globalShape_.size(); ++i) {
    int64_t end;
    if (__builtin_add_overflow(offset[i], shape[i], &end) ||
        end > globalShape_[i]) {
      error(shard.at,
            context() + "elements " + formatElementRange(offset, shape) +
                " lie outside global_shape " + formatShape(globalShape_) +
                " (dimension " + std::to_string(i) + " ends at " +
                (end > globalShape_[i] ? std::to_string(end)
                                       : std::string("an overflowing index")) +
                " > " + std::to_string(globalShape_[i]) + ")")
          .hint("global_offset + local_shape must not exceed global_shape in "
                "any dimension");
      return false;
    }
  }
  return true;
}

bool MetadataParser::checkFlatRange(const ShardDraft &shard,
                                    llvm::ArrayRef<int64_t> offset,
                                    llvm::ArrayRef<int64_t> shape) {
  // Within the global shape, so the volume cannot overflow.
  int64_t volume = elementCount(shape).value_or(0);
  FlatElementRange range = shard.flatRange;
  if (range.begin < range.end && range.begin >= 0 && range.end <= volume)
    return true;
  std::string rangeText = "flat_range [" + std::to_string(range.begin) + ", " +
                          std::to_string(range.end) + ")";
  std::string hint = "flat_range [a, b) indexes the row-major flattening "
                     "of the box; it needs 0 <= a < b <= " +
                     std::to_string(volume);
  if (range.begin == range.end)
    error(shard.flatRangeAt, context() + rangeText + " is empty")
        .hint("remove the shard, or give a range with a < b");
  else if (range.begin > range.end)
    error(shard.flatRangeAt, context() + rangeText + " ends before it begins")
        .hint(hint);
  else
    error(shard.flatRangeAt, context() + rangeText + " lies outside the " +
                                 std::to_string(volume) +
                                 " elements of the box " +
                                 formatElementRange(offset, shape))
        .hint(hint);
  return false;
}

} // namespace metadatajson

} // namespace aoa
