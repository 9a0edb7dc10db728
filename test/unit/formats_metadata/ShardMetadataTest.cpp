//===- ShardMetadataTest.cpp - The shard metadata model -------------------===//
//
// ShardMetadata and its builder: tensors and shards, lookup by key, key
// order, interning, refused input, cloning, element ranges.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/ShardMetadata.h"
#include "aoa/formats/metadata/MetadataWriter.h"

#include "MetadataTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace aoa;
using namespace aoa::test;

namespace {

TEST(ShardMetadata, BuilderStoresTensorsShardsAndFlatRanges) {
  expectSample(buildSample());
}

TEST(ShardMetadata, FindsTensorsByKey) {
  ShardMetadata m = buildSample();
  std::optional<TensorRef> found =
      m.find("llama.layers.0.mlp.up_proj.weight.moment1_0");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id(), 1u);
  EXPECT_FALSE(m.find("llama.layers.0.mlp.up_proj.weight"));
  // An in-file name that is not a key is not found as a tensor.
  EXPECT_FALSE(m.find("opt.m1"));
}

TEST(ShardMetadata, IteratesInSortedKeyOrder) {
  ShardMetadata m = buildSample();
  std::vector<std::string> keys;
  for (TensorId id : m.tensorIdsByKey())
    keys.emplace_back(m.tensor(id).key());
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "llama.layers.0.mlp.up_proj.weight.beta1_pow_acc_0",
                      "llama.layers.0.mlp.up_proj.weight.moment1_0",
                      "llama.layers.1.mlp.up_proj.weight", "scalar"}));
  // File order is kept too.
  std::vector<TensorId> fileOrder;
  for (TensorRef t : m.tensors())
    fileOrder.push_back(t.id());
  EXPECT_EQ(fileOrder, (std::vector<TensorId>{0, 1, 2, 3}));
}

// Sorted on two threads (halves merged), a large model's key order is the
// byte order std::sort gives; keys that share long prefixes, differ in
// their last byte, or are prefixes of one another included.
TEST(ShardMetadata, SortsOnTwoThreadsAsOnOne) {
  std::mt19937 random(11);
  std::vector<std::string> keys;
  for (int i = 0; i < 50000; ++i) {
    std::string key = "model.layers." + std::to_string(random() % 97) +
                      ".experts." + std::to_string(random() % 300) + ".w";
    if (i % 3 == 0)
      key += ".moment1_0";
    if (i % 7 == 0)
      key += std::string(1, static_cast<char>(0x80 + i % 100)); // high bytes
    keys.push_back(key + "#" + std::to_string(i)); // unique
  }
  for (unsigned threads : {1u, 2u}) {
    ShardMetadataBuilder builder;
    for (const std::string &key : keys)
      ASSERT_TRUE(builder.addTensor(key, DType::F32, {1}).has_value());
    ShardMetadata m = builder.finish(threads);
    std::vector<std::string> sorted;
    for (TensorId id : m.tensorIdsByKey())
      sorted.emplace_back(m.tensor(id).key());
    std::vector<std::string> expected = keys;
    std::sort(expected.begin(), expected.end()); // (bytes, as unsigned chars)
    EXPECT_EQ(sorted, expected) << threads << " threads";
  }
}

TEST(ShardMetadata, InternsFileNamesAndNamesOnce) {
  ShardMetadata m = buildSample();
  // rank00000..rank00003 and rank00007.
  EXPECT_EQ(m.files().size(), 5u);
  TensorRef up = m.tensor(0);
  TensorRef m1 = m.tensor(1);
  EXPECT_EQ(up.shards()[0].fileId(), m1.shards()[0].fileId());
  EXPECT_NE(up.shards()[0].fileId(), up.shards()[1].fileId());
  // A shard named by its key shares the key's string.
  EXPECT_EQ(up.shards()[0].nameId(), up.keyId());
  EXPECT_EQ(up.shards()[0].nameId(), up.shards()[3].nameId());
  EXPECT_EQ(m1.shards()[0].nameId(), m1.shards()[1].nameId());
  EXPECT_NE(m1.shards()[0].nameId(), m1.keyId());
  // 4 keys + "opt.m1" + "opt.m1.copy".
  EXPECT_EQ(m.strings().size(), 6u);
}

TEST(ShardMetadata, BuilderRefusesBadInput) {
  ShardMetadataBuilder b;
  EXPECT_FALSE(b.addShard(0, "f", "n", {0}, {1})) << "no tensor yet";
  ASSERT_TRUE(b.addTensor("a", DType::F32, {4, 4}));
  EXPECT_FALSE(b.addTensor("a", DType::F16, {2})) << "duplicate key";
  EXPECT_FALSE(b.addShard(0, "f", "n", {0}, {4, 4})) << "offset rank";
  EXPECT_FALSE(b.addShard(0, "f", "n", {0, 0}, {4})) << "shape rank";
  EXPECT_FALSE(b.addShard(0, /*fileId=*/9, /*nameId=*/0, {0, 0}, {4, 4}))
      << "unknown file id";
  b.setContentHash(0, 7); // no shard 0 yet: ignored
  EXPECT_TRUE(b.addShard(0, "f", "n", {0, 0}, {4, 4}));
  b.setContentHash(1, 7); // no shard 1: ignored
  // An in-file name may later become a key.
  EXPECT_TRUE(b.addTensor("n", DType::F32, {1}));
  ShardMetadata m = b.finish();
  EXPECT_EQ(m.tensorCount(), 2u);
  EXPECT_EQ(m.shardCount(), 1u);
  ASSERT_TRUE(m.find("n"));
  EXPECT_EQ(m.find("n")->shardCount(), 0u);
  EXPECT_EQ(m.tensor(0).shards()[0].nameId(), m.find("n")->keyId());
  EXPECT_FALSE(m.shard(0).contentHash());
}

TEST(ShardMetadata, CloneCopiesEverything) {
  ShardMetadata m = buildSample();
  ShardMetadata copy = m.clone();
  expectSample(copy);
  EXPECT_EQ(printShardMetadata(copy), printShardMetadata(m));
}

TEST(ShardMetadata, FormatsElementRanges) {
  EXPECT_EQ(formatElementRange({0, 256}, {512, 128}), "[0:512, 256:384]");
  EXPECT_EQ(formatElementRange({}, {}), "[]");
  EXPECT_EQ(formatShape({1024, 512}), "[1024, 512]");
  EXPECT_EQ(elementCount({1024, 512}), 524288);
  EXPECT_EQ(elementCount({}), 1);
  EXPECT_FALSE(elementCount({-1, 2}));
  EXPECT_FALSE(elementCount({int64_t(1) << 40, int64_t(1) << 40}));
}

} // namespace
