//===- MetadataTestSupport.h - Shard metadata test helpers ------*- C++ -*-===//
//
// Shared by the tests of the shard metadata model, its loader and the
// loader's diagnostics: a sample ShardMetadata and what it must hold, and
// metadata text built from one tensor's shard lines.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_FORMATS_METADATA_METADATATESTSUPPORT_H
#define AOA_TEST_UNIT_FORMATS_METADATA_METADATATESTSUPPORT_H

#include "aoa/formats/metadata/MetadataLoader.h"
#include "aoa/ir/ShardMetadata.h"

#include "CapturedDiagnostics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aoa::test {

/// Loads text and keeps every diagnostic.
struct Loaded : CapturedDiagnostics {
  std::optional<ShardMetadata> metadata;

  explicit Loaded(const std::string &text, const std::string &path = "m.json") {
    metadata = loadShardMetadataText(path, text, sources, diags);
  }
};

/// `m.json:LINE:COL` of the first occurrence of `needle` in `text`.
inline std::string placeOf(const std::string &text, const std::string &needle,
                           size_t from = 0) {
  size_t at = text.find(needle, from);
  EXPECT_NE(at, std::string::npos) << needle;
  size_t line = 1, lineStart = 0;
  for (size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return "m.json:" + std::to_string(line) + ":" +
         std::to_string(at - lineStart + 1);
}

inline constexpr const char *kHeader =
    "{\"format\": \"aoa-metadata\", \"version\": 1, \"tensors\": {\n";
inline constexpr const char *kFooter = "\n}}\n";

/// One tensor "w" [1024, 512] with the given shard lines.
inline std::string
tensorW(const std::string &shards,
        const std::string &fields =
            "\"dtype\": \"bfloat16\", \"global_shape\": [1024, 512]") {
  return std::string(kHeader) + "\"w\": {" + fields + ", \"shards\": [\n" +
         shards + "]}" + kFooter;
}

inline std::string shard(const std::string &offset, const std::string &shape,
                         const std::string &extra = "", int64_t rank = 0) {
  return "  {\"rank\": " + std::to_string(rank) +
         ", \"file\": \"r.safetensors\", \"name\": \"w\", \"global_offset\": " +
         offset + ", \"local_shape\": " + shape + extra + "}";
}

inline std::vector<int64_t> vec(llvm::ArrayRef<int64_t> a) { return a.vec(); }

/// A sample of every kind of tensor and shard: TP shards with replicas,
/// flat ranges, content hashes on some shards, a scalar.
inline ShardMetadata buildSample() {
  ShardMetadataBuilder b;
  EXPECT_TRUE(b.addTensor("llama.layers.1.mlp.up_proj.weight", DType::BF16,
                          {1024, 512}));
  // Two TP shards along dimension 0, each with a replica on another rank.
  EXPECT_TRUE(b.addShard(0, "rank00000.safetensors",
                         "llama.layers.1.mlp.up_proj.weight", {0, 0},
                         {512, 512}));
  std::optional<ShardId> second =
      b.addShard(1, "rank00001.safetensors",
                 "llama.layers.1.mlp.up_proj.weight", {512, 0}, {512, 512});
  EXPECT_TRUE(second);
  // Content hashes on two shards only; one is set twice (the last wins).
  b.setContentHash(*second, 1);
  b.setContentHash(*second, 0x2d06800538d394c2u);
  EXPECT_TRUE(b.addShard(2, "rank00002.safetensors",
                         "llama.layers.1.mlp.up_proj.weight", {0, 0},
                         {512, 512}));
  EXPECT_TRUE(b.addShard(3, "rank00003.safetensors",
                         "llama.layers.1.mlp.up_proj.weight", {512, 0},
                         {512, 512}));
  EXPECT_TRUE(b.addTensor("llama.layers.0.mlp.up_proj.weight.moment1_0",
                          DType::F32, {1024, 512}));
  // A sharding-stage-1 split of the whole tensor, mid-row, plus a shard
  // without a flat range after the flat ones.
  EXPECT_TRUE(b.addShard(0, "rank00000.safetensors", "opt.m1", {0, 0},
                         {1024, 512}, FlatElementRange{0, 300000}));
  std::optional<ShardId> flat =
      b.addShard(1, "rank00001.safetensors", "opt.m1", {0, 0}, {1024, 512},
                 FlatElementRange{300000, 524288});
  EXPECT_TRUE(flat);
  b.setContentHash(*flat, 0);
  EXPECT_TRUE(b.addShard(2, "rank00002.safetensors", "opt.m1.copy", {0, 0},
                         {1024, 512}));
  EXPECT_TRUE(b.addTensor("llama.layers.0.mlp.up_proj.weight.beta1_pow_acc_0",
                          DType::F32, {1}));
  EXPECT_TRUE(b.addShard(0, "rank00000.safetensors",
                         "llama.layers.0.mlp.up_proj.weight.beta1_pow_acc_0",
                         {0}, {1}));
  EXPECT_TRUE(b.addTensor("scalar", DType::I64, {}));
  EXPECT_TRUE(b.addShard(7, "rank00007.safetensors", "scalar", {}, {}));
  return b.finish();
}

inline void expectSample(const ShardMetadata &m) {
  ASSERT_EQ(m.tensorCount(), 4u);
  ASSERT_EQ(m.shardCount(), 9u);

  TensorRef up = m.tensor(0);
  EXPECT_EQ(up.key(), "llama.layers.1.mlp.up_proj.weight");
  EXPECT_EQ(up.dtype(), DType::BF16);
  EXPECT_EQ(vec(up.globalShape()), (std::vector<int64_t>{1024, 512}));
  ASSERT_EQ(up.shardCount(), 4u);
  std::vector<uint32_t> ranks;
  for (ShardRef s : up.shards())
    ranks.push_back(s.rank());
  EXPECT_EQ(ranks, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(up.shards()[1].file(), "rank00001.safetensors");
  EXPECT_EQ(vec(up.shards()[1].globalOffset()), (std::vector<int64_t>{512, 0}));
  EXPECT_EQ(vec(up.shards()[1].localShape()), (std::vector<int64_t>{512, 512}));
  EXPECT_FALSE(up.shards()[1].flatRange());
  EXPECT_EQ(up.shards()[1].storedElementCount(), 512 * 512);
  // Replicas: the same offset on two ranks.
  EXPECT_EQ(vec(up.shards()[0].globalOffset()),
            vec(up.shards()[2].globalOffset()));
  EXPECT_EQ(up.shards()[3].tensorId(), up.id());
  EXPECT_EQ(up.shards()[1].contentHash(), 0x2d06800538d394c2u);
  EXPECT_FALSE(up.shards()[0].contentHash());
  EXPECT_FALSE(up.shards()[2].contentHash());

  TensorRef m1 = m.tensor(1);
  EXPECT_EQ(m1.dtype(), DType::F32);
  ASSERT_EQ(m1.shardCount(), 3u);
  EXPECT_EQ(m1.shards()[0].flatRange(), (FlatElementRange{0, 300000}));
  EXPECT_EQ(m1.shards()[1].flatRange(), (FlatElementRange{300000, 524288}));
  EXPECT_EQ(m1.shards()[1].storedElementCount(), 224288);
  EXPECT_EQ(m1.shards()[1].contentHash(), 0u) << "a zero hash is a hash";
  EXPECT_FALSE(m1.shards()[2].contentHash());
  EXPECT_FALSE(m1.shards()[2].flatRange());
  EXPECT_EQ(m1.shards()[2].name(), "opt.m1.copy");

  TensorRef beta = m.tensor(2);
  EXPECT_EQ(vec(beta.globalShape()), (std::vector<int64_t>{1}));
  EXPECT_EQ(beta.shards()[0].storedElementCount(), 1);

  TensorRef scalar = m.tensor(3);
  EXPECT_EQ(scalar.ndim(), 0u);
  EXPECT_TRUE(scalar.globalShape().empty());
  EXPECT_TRUE(scalar.shards()[0].localShape().empty());
  EXPECT_EQ(scalar.shards()[0].storedElementCount(), 1);
  EXPECT_EQ(scalar.shards()[0].rank(), 7u);
  // Added after the first hash was set: no hash, and no out-of-bounds read.
  EXPECT_FALSE(scalar.shards()[0].contentHash());
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_FORMATS_METADATA_METADATATESTSUPPORT_H
