//===- MetadataWriter.cpp --------------------------------------------------===//
#include "aoa/formats/metadata/MetadataWriter.h"

#include "aoa/ir/ContentHashText.h"
#include "aoa/ir/Json.h"

#include <charconv>
#include <ostream>
#include <sstream>

namespace aoa {

namespace {

/// Accumulates text and hands it to the stream in large blocks: metadata of
/// a DeepSeek-sized checkpoint is hundreds of megabytes of small tokens.
class ChunkedJsonOutput {
public:
  explicit ChunkedJsonOutput(std::ostream &os) : os_(os) {
    buffer_.reserve(kFlushBytes + 4096);
  }
  ~ChunkedJsonOutput() { flush(); }

  void raw(std::string_view text) {
    buffer_.append(text.data(), text.size());
    maybeFlush();
  }
  void integer(int64_t value) {
    char digits[24];
    auto result = std::to_chars(digits, digits + sizeof(digits), value);
    buffer_.append(digits, result.ptr);
  }
  void string(std::string_view text) { appendJsonString(buffer_, text); }
  void integers(llvm::ArrayRef<int64_t> values) {
    buffer_ += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i)
        buffer_ += ", ";
      integer(values[i]);
    }
    buffer_ += ']';
  }
  void flush() {
    os_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

private:
  static constexpr size_t kFlushBytes = 1 << 20;
  void maybeFlush() {
    if (buffer_.size() >= kFlushBytes)
      flush();
  }
  std::ostream &os_;
  std::string buffer_;
};

} // namespace

void writeShardMetadata(const ShardMetadata &metadata, std::ostream &os) {
  ChunkedJsonOutput out(os);
  out.raw("{\"format\": \"aoa-metadata\", \"version\": 1, \"tensors\": {");
  bool firstTensor = true;
  for (TensorRef tensor : metadata.tensors()) {
    out.raw(firstTensor ? "\n" : ",\n");
    firstTensor = false;
    out.string(tensor.key());
    out.raw(": {\"dtype\": ");
    out.string(dtypeName(tensor.dtype()));
    out.raw(", \"global_shape\": ");
    out.integers(tensor.globalShape());
    out.raw(", \"shards\": [");
    bool firstShard = true;
    for (ShardRef shard : tensor.shards()) {
      out.raw(firstShard ? "\n  {\"rank\": " : ",\n  {\"rank\": ");
      firstShard = false;
      out.integer(shard.rank());
      out.raw(", \"file\": ");
      out.string(shard.file());
      out.raw(", \"name\": ");
      out.string(shard.name());
      out.raw(", \"global_offset\": ");
      out.integers(shard.globalOffset());
      out.raw(", \"local_shape\": ");
      out.integers(shard.localShape());
      if (std::optional<FlatElementRange> range = shard.flatRange()) {
        out.raw(", \"flat_range\": [");
        out.integer(range->begin);
        out.raw(", ");
        out.integer(range->end);
        out.raw("]");
      }
      if (std::optional<uint64_t> hash = shard.contentHash()) {
        out.raw(", \"xxh3\": \"");
        out.raw(formatContentHash(*hash));
        out.raw("\"");
      }
      out.raw("}");
    }
    out.raw("]}");
  }
  out.raw("\n}}\n");
}

std::string printShardMetadata(const ShardMetadata &metadata) {
  std::ostringstream os;
  writeShardMetadata(metadata, os);
  return os.str();
}

} // namespace aoa
