//===- CheckpointReaderTest.cpp - Reading a sharded checkpoint by key -----===//
//
// Checkpoints are written with the synthetic fill, whose values do not
// depend on the layout, so any region read back must equal the fill of that
// region computed directly.
//
//===----------------------------------------------------------------------===//
#include "aoa/checkpoint/CheckpointReader.h"

#include "aoa/runtime/support/ContentHash.h"

#include "CheckpointTestSupport.h"
#include "ScratchDirectory.h"

#include <gtest/gtest.h>

#include <random>

using namespace aoa;
using namespace aoa::checkpoint;
using namespace aoa::runtime;
using aoa::test::LayoutBuilder;
using aoa::test::ScratchDirectory;

namespace {

std::vector<std::byte> expectedRegion(TensorRef key, const Box &region) {
  std::vector<std::byte> bytes(size_t(region.volume()) *
                               dtypeSize(key.dtype()));
  EXPECT_TRUE(fillSynthetic(test::kRandomFill, key.key(), key.dtype(),
                            key.globalShape(), region, bytes.data(),
                            bytes.size())
                  .ok());
  return bytes;
}

Expected<std::vector<std::byte>> readRegion(const CheckpointReader &reader,
                                            std::string_view key,
                                            const Box &region) {
  TensorRef tensor = *reader.metadata().find(key);
  std::vector<std::byte> bytes(size_t(region.volume()) *
                               dtypeSize(tensor.dtype()));
  if (Status read =
          reader.readRegion(tensor.id(), region, bytes.data(), bytes.size());
      !read)
    return read.error();
  return bytes;
}

Box box(const std::vector<Interval> &dims) {
  return Box(llvm::ArrayRef<Interval>(dims));
}

/// A random sub-box of the key (sometimes empty).
Box randomRegion(std::mt19937_64 &rng, llvm::ArrayRef<int64_t> shape) {
  std::vector<Interval> dims;
  for (int64_t extent : shape) {
    int64_t x = int64_t(rng() % uint64_t(extent + 1));
    int64_t y = int64_t(rng() % uint64_t(extent + 1));
    if (x == y && rng() % 4 != 0)
      y = x < extent ? x + 1 : x - 1;
    dims.push_back(Interval{std::min(x, y), std::max(x, y)});
  }
  return box(dims);
}

TEST(CheckpointReader, ReadsAnyRegionOfEveryLayout) {
  ScratchDirectory dir;
  ShardMetadata layout = test::mixedLayout();
  test::writeSynthetic(layout, dir.path());
  std::mt19937_64 rng(0xC4EC);
  for (CheckpointReaderOptions options :
       {CheckpointReaderOptions{}, CheckpointReaderOptions{1}}) {
    CheckpointReader reader(dir.path(), layout.clone(), options);
    EXPECT_TRUE(reader.validate().empty());
    for (TensorRef key : reader.metadata().tensors()) {
      Box whole = Box::fromShape(key.globalShape());
      Expected<std::vector<std::byte>> all =
          readRegion(reader, key.key(), whole);
      ASSERT_TRUE(all.ok()) << all.error().toString();
      EXPECT_EQ(*all, expectedRegion(key, whole)) << key.key();
      for (int iteration = 0; iteration < 200; ++iteration) {
        Box region = randomRegion(rng, key.globalShape());
        Expected<std::vector<std::byte>> part =
            readRegion(reader, key.key(), region);
        ASSERT_TRUE(part.ok()) << part.error().toString();
        ASSERT_EQ(*part, expectedRegion(key, region))
            << key.key() << " " << region.toString();
      }
    }
  }
}

TEST(CheckpointReader, HandsReplicasToTheCaller) {
  test::SyntheticCheckpoint checkpoint(test::mixedLayout());
  const CheckpointReader &reader = checkpoint.reader;
  TensorRef w = *reader.metadata().find("w");
  Box region = box({{1, 5}, {3, 8}});
  std::vector<std::byte> buffer(size_t(region.volume()) * 2);
  std::vector<std::pair<ShardId, std::string>> seen;
  Status read = reader.readRegion(
      w.id(), region, buffer.data(), buffer.size(),
      [&](const ReplicaOverlap &replica) {
        seen.emplace_back(replica.shard, replica.region.toString());
        std::vector<std::byte> expected = expectedRegion(w, replica.region);
        EXPECT_EQ(std::memcmp(replica.values, expected.data(), expected.size()),
                  0);
        return Status();
      });
  ASSERT_TRUE(read.ok()) << read.error().toString();
  EXPECT_EQ(buffer, expectedRegion(w, region));
  EXPECT_EQ(seen, (std::vector<std::pair<ShardId, std::string>>{
                      {2, "[1:5, 3:5]"}, {3, "[1:5, 5:8]"}}));

  // The whole of "p" after its center: the rest is four boxes, and the
  // center is a replica.
  TensorRef p = *reader.metadata().find("p");
  Box frame = Box::fromShape(p.globalShape());
  std::vector<std::byte> framed(size_t(frame.volume()) * 2);
  seen.clear();
  ASSERT_TRUE(reader
                  .readRegion(p.id(), frame, framed.data(), framed.size(),
                              [&](const ReplicaOverlap &replica) {
                                seen.emplace_back(replica.shard,
                                                  replica.region.toString());
                                return Status();
                              })
                  .ok());
  EXPECT_EQ(framed, expectedRegion(p, frame));
  EXPECT_EQ(seen, (std::vector<std::pair<ShardId, std::string>>{
                      {p.firstShard() + 1, "[1:3, 2:4]"}}));

  // No replicas, no calls; a failure of the caller ends the read.
  TensorRef v = *reader.metadata().find("v");
  Box all = Box::fromShape(v.globalShape());
  std::vector<std::byte> values(size_t(all.volume()) * 8);
  int calls = 0;
  ASSERT_TRUE(reader
                  .readRegion(v.id(), all, values.data(), values.size(),
                              [&](const ReplicaOverlap &) {
                                ++calls;
                                return Status();
                              })
                  .ok());
  EXPECT_EQ(calls, 0);
  Status stopped =
      reader.readRegion(w.id(), region, buffer.data(), buffer.size(),
                        [&](const ReplicaOverlap &) {
                          return Status(Error{"stop", ""});
                        });
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.error().message, "stop");
}

TEST(CheckpointReaderErrors, ElementsStoredNowhere) {
  ScratchDirectory dir;
  LayoutBuilder b;
  b.key("h", DType::F32, {4, 4})
      .shard(0, "f.safetensors", {0, 0}, {2, 4})
      .shard(0, "f.safetensors", {2, 0}, {2, 4}, FlatElementRange{0, 3},
             "h.flat");
  ShardMetadata layout = b.finish();
  test::writeSynthetic(layout, dir.path());
  CheckpointReader reader(dir.path(), layout.clone());
  Expected<std::vector<std::byte>> whole =
      readRegion(reader, "h", box({{0, 4}, {0, 4}}));
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().message,
            "key 'h': elements [3:4, 0:4] are stored in no shard of the "
            "checkpoint in " +
                dir.path() + " (and 1 more regions; 5 elements in all)");
  EXPECT_EQ(whole.error().hint,
            "the metadata's shards must cover every element of every key; "
            "the checkpoint is incomplete, or its metadata is wrong");
  Expected<std::vector<std::byte>> one =
      readRegion(reader, "h", box({{2, 3}, {3, 4}}));
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().message,
            "key 'h': elements [2:3, 3:4] are stored in no shard of the "
            "checkpoint in " +
                dir.path());
  // What is stored reads fine.
  EXPECT_TRUE(readRegion(reader, "h", box({{0, 3}, {0, 3}})).ok());
}

TEST(CheckpointReaderErrors, BadRegionsAndBuffers) {
  test::SyntheticCheckpoint checkpoint(test::mixedLayout());
  const CheckpointReader &reader = checkpoint.reader;
  TensorRef w = *reader.metadata().find("w");
  std::vector<std::byte> buffer(1000);
  Status outside =
      reader.readRegion(w.id(), box({{0, 7}, {0, 1}}), buffer.data(), 14);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(
      outside.error().message,
      "key 'w': region [0:7, 0:1] is not inside its global shape [6, 10]");
  Status size =
      reader.readRegion(w.id(), box({{0, 6}, {0, 1}}), buffer.data(), 14);
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.error().message, "key 'w': a buffer of 14 bytes for region "
                                  "[0:6, 0:1], which needs 12");
}

TEST(CheckpointReaderErrors, MissingFile) {
  test::SyntheticCheckpoint checkpoint(test::mixedLayout());
  std::filesystem::remove(checkpoint.file("r1.safetensors"));
  const CheckpointReader &reader = checkpoint.reader;
  Expected<std::vector<std::byte>> read =
      readRegion(reader, "w", box({{0, 6}, {0, 10}}));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message,
            checkpoint.file("r1.safetensors") +
                ": the file does not exist, but the checkpoint's metadata "
                "stores shard 1 of key 'w' there");
  EXPECT_EQ(read.error().hint, "copy the missing file into " +
                                   checkpoint.dir.path() +
                                   ", or pass the directory that holds the "
                                   "whole checkpoint");
  // Columns 0..4 do not need the file.
  EXPECT_TRUE(readRegion(reader, "w", box({{0, 6}, {0, 5}})).ok());
  // One problem for the file, not one per shard in it.
  std::vector<Error> problems = reader.validate();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].message, read.error().message);
}

TEST(CheckpointReaderErrors, TruncatedFile) {
  test::SyntheticCheckpoint checkpoint(test::mixedLayout());
  std::string path = checkpoint.file("r0.safetensors");
  test::truncateFile(path, std::filesystem::file_size(path) - 3);
  const CheckpointReader &reader = checkpoint.reader;
  Expected<std::vector<std::byte>> read =
      readRegion(reader, "w", box({{0, 1}, {0, 1}}));
  ASSERT_FALSE(read.ok());
  // The file's header is checked against its size when it is opened.
  EXPECT_EQ(read.error().message.substr(0, path.size() + 9), path + ": tensor ")
      << read.error().message;
  EXPECT_NE(read.error().message.find("end past the data section"),
            std::string::npos)
      << read.error().message;
  EXPECT_EQ(reader.validate().size(), 1u);
}

TEST(CheckpointReaderErrors, StoredTensorsThatDoNotMatchTheMetadata) {
  test::SyntheticCheckpoint checkpoint(test::mixedLayout());
  LayoutBuilder b;
  b.key("w", DType::F32, {6, 10})
      .shard(0, "r0.safetensors", {0, 0}, {6, 5})
      .shard(1, "r1.safetensors", {0, 5}, {6, 5});
  b.key("m", DType::F32, {6, 10})
      .shard(0, "r0.safetensors", {0, 0}, {6, 10}, FlatElementRange{0, 24},
             "opt.m");
  b.key("v", DType::F64, {4, 3, 2})
      .shard(3, "r3.safetensors", {2, 0, 0}, {2, 2, 2})
      .shard(3, "r3.safetensors", {0, 0, 0}, {2, 3, 2}, std::nullopt, "zz");
  CheckpointReader reader(checkpoint.dir.path(), b.finish());
  std::vector<Error> problems = reader.validate();
  std::string r0 = checkpoint.file("r0.safetensors"),
              r1 = checkpoint.file("r1.safetensors"),
              r3 = checkpoint.file("r3.safetensors");
  std::vector<std::string> messages;
  for (const Error &problem : problems)
    messages.push_back(problem.message);
  EXPECT_EQ(messages,
            (std::vector<std::string>{
                r0 + ": tensor 'w' (shard 0 of key 'w'): stored as BF16, but "
                     "the key's dtype is float32 (F32)",
                r1 + ": tensor 'w' (shard 1 of key 'w'): stored as BF16, but "
                     "the key's dtype is float32 (F32)",
                r0 + ": tensor 'opt.m' (shard 0 of key 'm'): stored with "
                     "shape [23], but its flat_range [0, 24) needs [24]",
                r3 + ": tensor 'v' (shard 0 of key 'v'): stored with shape "
                     "[2, 3, 2], but its local_shape needs [2, 2, 2]",
                r3 + ": holds no tensor 'zz', but the metadata stores shard 1 "
                     "of key 'v' there"}));
  EXPECT_EQ(problems[0].hint,
            "the file does not match the checkpoint's metadata: it was "
            "replaced, rewritten, or belongs to another checkpoint");
  EXPECT_EQ(reader.validate(2).size(), 2u);
  // Reads report the same.
  Expected<std::vector<std::byte>> read =
      readRegion(reader, "w", box({{0, 1}, {0, 1}}));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message, messages[0]);
}

TEST(CheckpointReader, HashesAndVerifiesStoredBytes) {
  ScratchDirectory dir;
  ShardMetadata layout = test::mixedLayout();
  WrittenCheckpoint written = test::writeSynthetic(layout, dir.path());
  CheckpointReader reader(dir.path(), written.metadata.clone());
  for (ShardId id = 0; id < reader.metadata().shardCount(); ++id) {
    EXPECT_TRUE(reader.verifyContentHash(id).ok()) << id;
    ShardRef shard = reader.metadata().shard(id);
    std::vector<std::byte> stored(
        size_t(shard.storedElementCount()) *
        dtypeSize(reader.metadata().tensor(shard.tensorId()).dtype()));
    ASSERT_TRUE(
        reader.readStored(id, 0, shard.storedElementCount(), stored.data())
            .ok());
    EXPECT_EQ(*reader.hashShard(id), contentHash(stored.data(), stored.size()));
  }

  // Shard 2 of "m" is elements [47, 60) in r2.safetensors as 'opt.m'.
  ShardId flipped = reader.metadata().find("m")->firstShard() + 2;
  test::flipByte(dir.file("r2.safetensors"), "opt.m", 5);
  Status verified = reader.verifyContentHash(flipped);
  ASSERT_FALSE(verified.ok());
  std::string prefix = dir.file("r2.safetensors") +
                       ": tensor 'opt.m' (shard 2 of key 'm'): the data's "
                       "xxh3 is ";
  EXPECT_EQ(verified.error().message.substr(0, prefix.size()), prefix);
  EXPECT_NE(
      verified.error().message.find(
          ", but the metadata records " +
          formatContentHash(*reader.metadata().shard(flipped).contentHash())),
      std::string::npos)
      << verified.error().message;

  CheckpointReader unhashed(dir.path(), layout.clone());
  Status none = unhashed.verifyContentHash(0);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            dir.file("r0.safetensors") +
                ": tensor 'w' (shard 0 of key 'w'): the metadata records no "
                "xxh3 hash to verify");
}

} // namespace
