//===- CheckpointTestSupport.h - Checkpoints for tests ----------*- C++ -*-===//
//
// The checkpoint reader, writer and comparison tests build small layouts by
// hand, write them with synthetic data, and then damage files on purpose:
// flip one stored byte, cut a file short.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_CHECKPOINTTESTSUPPORT_H
#define AOA_TEST_UNIT_CHECKPOINTTESTSUPPORT_H

#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/checkpoint/ShardedCheckpointWriter.h"
#include "aoa/checkpoint/SyntheticFill.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/storage/SafetensorsReader.h"

#include "ScratchDirectory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace aoa::test {

/// A layout written shard by shard: key() starts a key, shard() adds one of
/// its shards (the in-file name is the key unless given).
class LayoutBuilder {
public:
  LayoutBuilder &key(const std::string &name, DType dtype,
                     std::vector<int64_t> shape) {
    key_ = name;
    EXPECT_TRUE(builder_.addTensor(name, dtype, shape)) << name;
    return *this;
  }
  LayoutBuilder &shard(uint32_t rank, const std::string &file,
                       std::vector<int64_t> offset, std::vector<int64_t> shape,
                       std::optional<FlatElementRange> flat = std::nullopt,
                       std::string name = "") {
    EXPECT_TRUE(builder_.addShard(rank, file, name.empty() ? key_ : name,
                                  offset, shape, flat))
        << key_;
    return *this;
  }
  ShardMetadata finish() { return builder_.finish(); }

private:
  ShardMetadataBuilder builder_;
  std::string key_;
};

inline const checkpoint::SyntheticFill kRandomFill{
    checkpoint::SyntheticFill::Kind::Random, 42};

/// Writes `layout` into `directory` from the synthetic fill; the test fails
/// when that does not work.
inline checkpoint::WrittenCheckpoint
writeSynthetic(const ShardMetadata &layout, const std::string &directory,
               checkpoint::SyntheticFill fill = kRandomFill) {
  std::unique_ptr<checkpoint::TensorSupplier> supplier =
      checkpoint::makeSyntheticSupplier(fill);
  checkpoint::ShardedCheckpointWriterOptions options;
  options.overwrite = true;
  // Small chunks, so that tests cover tensors written in several pieces.
  options.chunkBytes = 40;
  runtime::Expected<checkpoint::WrittenCheckpoint> written =
      checkpoint::writeShardedCheckpoint(layout, *supplier, directory, options);
  EXPECT_TRUE(written.ok()) << written.error().toString();
  if (!written.ok())
    return checkpoint::WrittenCheckpoint{};
  return std::move(*written);
}

/// Every kind of shard, over four files r0..r3.safetensors:
///  - "w": two column shards with a replica each (shards 2 and 3);
///  - "m": a flat split of the whole key whose ranges cross rows, named
///    'opt.m' in every file;
///  - "v": flat pieces of one box, in a shuffled file order, and a box;
///  - "p": a block in the middle of the key, then the whole key (which then
///    fills the frame of four boxes around the block, and replicates it);
///  - a scalar and a bool vector.
inline ShardMetadata mixedLayout() {
  LayoutBuilder b;
  b.key("w", DType::BF16, {6, 10})
      .shard(0, "r0.safetensors", {0, 0}, {6, 5})
      .shard(1, "r1.safetensors", {0, 5}, {6, 5})
      .shard(2, "r2.safetensors", {0, 0}, {6, 5})
      .shard(3, "r3.safetensors", {0, 5}, {6, 5});
  b.key("m", DType::F32, {6, 10})
      .shard(0, "r0.safetensors", {0, 0}, {6, 10}, FlatElementRange{0, 23},
             "opt.m")
      .shard(1, "r1.safetensors", {0, 0}, {6, 10}, FlatElementRange{23, 47},
             "opt.m")
      .shard(2, "r2.safetensors", {0, 0}, {6, 10}, FlatElementRange{47, 60},
             "opt.m");
  b.key("v", DType::F64, {4, 3, 2})
      .shard(0, "r0.safetensors", {0, 0, 0}, {2, 3, 2}, FlatElementRange{1, 9})
      .shard(1, "r1.safetensors", {0, 0, 0}, {2, 3, 2}, FlatElementRange{0, 1})
      .shard(2, "r2.safetensors", {0, 0, 0}, {2, 3, 2}, FlatElementRange{9, 12})
      .shard(3, "r3.safetensors", {2, 0, 0}, {2, 3, 2});
  b.key("p", DType::F16, {4, 6})
      .shard(0, "r0.safetensors", {1, 2}, {2, 2}, std::nullopt, "p.center")
      .shard(1, "r1.safetensors", {0, 0}, {4, 6});
  b.key("step", DType::I64, {}).shard(0, "r0.safetensors", {}, {});
  b.key("mask", DType::Bool, {7}).shard(1, "r1.safetensors", {0}, {7});
  return b.finish();
}

/// The keys of `layout`, each whole, in one file.
inline ShardMetadata wholeLayout(const ShardMetadata &layout) {
  LayoutBuilder b;
  for (TensorRef tensor : layout.tensors()) {
    std::vector<int64_t> shape = tensor.globalShape().vec();
    b.key(std::string(tensor.key()), tensor.dtype(), shape)
        .shard(0, "all.safetensors", std::vector<int64_t>(shape.size(), 0),
               shape);
  }
  return b.finish();
}

/// `layout` written from the synthetic fill into a scratch directory, with a
/// reader over it (its metadata records the hashes).
struct SyntheticCheckpoint {
  explicit SyntheticCheckpoint(const ShardMetadata &layout,
                               checkpoint::SyntheticFill fill = kRandomFill)
      : reader(dir.path(), writeSynthetic(layout, dir.path(), fill).metadata) {}
  std::string file(const std::string &name) const { return dir.file(name); }

  ScratchDirectory dir;
  checkpoint::CheckpointReader reader;
};

/// Where byte `byte` of tensor `name`'s data is in the file at `path`.
inline uint64_t fileOffsetOf(const std::string &path, const std::string &name,
                             uint64_t byte) {
  runtime::Expected<runtime::SafetensorsReader> file =
      runtime::SafetensorsReader::open(path);
  EXPECT_TRUE(file.ok()) << file.error().toString();
  const runtime::SafetensorsTensor *tensor = file->find(name);
  EXPECT_NE(tensor, nullptr) << name;
  return file->dataOffset() + tensor->dataBegin + byte;
}

/// XORs `mask` into byte `byte` of tensor `name`'s data in the file.
inline void flipByte(const std::string &path, const std::string &name,
                     uint64_t byte, unsigned char mask = 0x01) {
  uint64_t offset = fileOffsetOf(path, name, byte);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(std::streamoff(offset));
  char value = 0;
  file.read(&value, 1);
  value = char(value ^ mask);
  file.seekp(std::streamoff(offset));
  file.write(&value, 1);
  EXPECT_TRUE(file.good()) << path;
}

inline void truncateFile(const std::string &path, uint64_t size) {
  std::filesystem::resize_file(path, size);
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_CHECKPOINTTESTSUPPORT_H
