//===- HuggingFaceShardsTest.cpp - Packing tensors into HF files ----------===//
//
// Exact boundaries, oversized tensors, one-file naming and totals on small
// hand-made cases; then random tensor lists checked against the rules
// (every key in exactly one file, files in order, no file over the limit
// unless it holds one tensor, greedy: the next file's first tensor did not
// fit), and the index text transformers would write.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/HuggingFaceShards.h"
#include "aoa/formats/SafetensorsIndex.h"
#include "aoa/ir/HuggingFaceIndex.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

using namespace aoa;
using namespace aoa::formats;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

/// A uint8 tensor of `bytes` bytes.
ExportTensor bytesTensor(std::string key, int64_t bytes) {
  return ExportTensor{std::move(key), DType::U8, {bytes}};
}

HuggingFaceShards pack(const std::vector<ExportTensor> &tensors, uint64_t limit,
                       uint32_t ranks = 1) {
  HuggingFaceShardOptions options;
  options.maxShardSize = limit;
  options.ranks = ranks;
  runtime::Expected<HuggingFaceShards> shards =
      packHuggingFaceShards(tensors, options);
  EXPECT_TRUE(shards.ok()) << (shards.ok() ? "" : shards.error().toString());
  return shards.ok() ? std::move(*shards) : HuggingFaceShards{};
}

/// The file of each tensor, by key.
std::vector<std::string> filesOf(const HuggingFaceShards &shards,
                                 const std::vector<std::string> &keys) {
  std::vector<std::string> files;
  for (const std::string &key : keys) {
    std::optional<TensorRef> tensor = shards.layout.find(key);
    EXPECT_TRUE(tensor.has_value()) << key;
    files.push_back(tensor ? std::string(tensor->shards()[0].file()) : "");
  }
  return files;
}

TEST(HuggingFaceShardsTest, FileNames) {
  EXPECT_EQ(huggingFaceShardFileName(0, 1), "model.safetensors");
  EXPECT_EQ(huggingFaceShardFileName(0, 2), "model-00001-of-00002.safetensors");
  EXPECT_EQ(huggingFaceShardFileName(11, 163),
            "model-00012-of-00163.safetensors");
  EXPECT_EQ(huggingFaceShardFileName(99999, 100000),
            "model-100000-of-100000.safetensors");
}

TEST(HuggingFaceShardsTest, AFileEndsExactlyAtTheLimit) {
  HuggingFaceShards shards =
      pack({bytesTensor("a", 40), bytesTensor("b", 60), bytesTensor("c", 1),
            bytesTensor("d", 99), bytesTensor("e", 1)},
           100);
  EXPECT_THAT(shards.files, ElementsAre("model-00001-of-00003.safetensors",
                                        "model-00002-of-00003.safetensors",
                                        "model-00003-of-00003.safetensors"));
  EXPECT_THAT(shards.fileBytes, ElementsAre(100u, 100u, 1u));
  EXPECT_THAT(filesOf(shards, {"a", "b", "c", "d", "e"}),
              ElementsAre(shards.files[0], shards.files[0], shards.files[1],
                          shards.files[1], shards.files[2]));
  EXPECT_EQ(shards.totalSize, 201u);
  EXPECT_TRUE(shards.needsIndex());
}

TEST(HuggingFaceShardsTest, ATensorOverTheLimitGetsAFileOfItsOwn) {
  HuggingFaceShards shards =
      pack({bytesTensor("a", 30), bytesTensor("big", 150), bytesTensor("c", 20),
            bytesTensor("d", 80), bytesTensor("e", 101), bytesTensor("f", 0)},
           100);
  EXPECT_THAT(shards.fileBytes, ElementsAre(30u, 150u, 100u, 101u, 0u));
  EXPECT_THAT(filesOf(shards, {"a", "big", "c", "d", "e", "f"}),
              ElementsAre(shards.files[0], shards.files[1], shards.files[2],
                          shards.files[2], shards.files[3], shards.files[4]));
  EXPECT_EQ(shards.files[4], "model-00005-of-00005.safetensors");
  EXPECT_EQ(shards.totalSize, 381u);
}

TEST(HuggingFaceShardsTest, OneFileIsModelSafetensors) {
  HuggingFaceShards shards = pack({ExportTensor{"w", DType::BF16, {4, 8}},
                                   ExportTensor{"s", DType::I64, {}},
                                   ExportTensor{"z", DType::F32, {0, 3}}},
                                  kDefaultMaxShardSize);
  EXPECT_THAT(shards.files, ElementsAre("model.safetensors"));
  EXPECT_THAT(shards.fileBytes, ElementsAre(72u));
  EXPECT_EQ(shards.totalSize, 72u);
  EXPECT_FALSE(shards.needsIndex());
  // Whole tensors, rank 0, in-file name = key, in the order given.
  ASSERT_EQ(shards.layout.tensorCount(), 3u);
  EXPECT_EQ(shards.layout.tensor(0).key(), "w");
  EXPECT_EQ(shards.layout.tensor(1).key(), "s");
  ShardRef w = shards.layout.tensor(0).shards()[0];
  EXPECT_EQ(w.rank(), 0u);
  EXPECT_EQ(w.name(), "w");
  EXPECT_THAT(w.globalOffset(), ElementsAre(0, 0));
  EXPECT_THAT(w.localShape(), ElementsAre(4, 8));
  EXPECT_EQ(shards.layout.tensor(0).dtype(), DType::BF16);
}

TEST(HuggingFaceShardsTest, NoTensorsNoFiles) {
  HuggingFaceShards shards = pack({}, 100);
  EXPECT_TRUE(shards.files.empty());
  EXPECT_EQ(shards.totalSize, 0u);
}

TEST(HuggingFaceShardsTest, FilesAreSpreadOverRanks) {
  std::vector<ExportTensor> tensors;
  for (int i = 0; i < 7; ++i)
    tensors.push_back(bytesTensor("t" + std::to_string(i), 10));
  HuggingFaceShards shards = pack(tensors, 10, 3);
  ASSERT_EQ(shards.files.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    ShardRef shard = shards.layout.tensor(TensorId(i)).shards()[0];
    EXPECT_EQ(shard.file(), shards.files[size_t(i)]);
    EXPECT_EQ(shard.rank(), uint32_t(i % 3));
  }
}

TEST(HuggingFaceShardsTest, KeyOrderFromMetadata) {
  ShardMetadataBuilder builder;
  for (const char *key : {"z", "b", "a"}) {
    (void)builder.addTensor(key, DType::F32, {2});
    (void)builder.addShard(0, "x.safetensors", key, {0}, {2});
  }
  ShardMetadata keys = builder.finish();
  HuggingFaceShardOptions options;
  options.maxShardSize = 8;
  runtime::Expected<HuggingFaceShards> shards =
      packHuggingFaceShards(keys, options);
  ASSERT_TRUE(shards.ok());
  EXPECT_EQ(shards->layout.tensor(0).key(), "a");
  EXPECT_EQ(shards->layout.tensor(2).key(), "z");
  EXPECT_EQ(shards->layout.tensor(2).shards()[0].file(),
            "model-00003-of-00003.safetensors");
}

TEST(HuggingFaceShardsTest, Refusals) {
  HuggingFaceShardOptions options;
  auto failure = [&](std::vector<ExportTensor> tensors) {
    runtime::Expected<HuggingFaceShards> shards =
        packHuggingFaceShards(tensors, options);
    EXPECT_FALSE(shards.ok());
    return shards.ok() ? std::string() : shards.error().message;
  };
  EXPECT_EQ(failure({bytesTensor("a", 1), bytesTensor("a", 2)}),
            "tensor 'a': given twice");
  EXPECT_THAT(failure({ExportTensor{"n", DType::F32, {2, -1}}}),
              HasSubstr("tensor 'n': shape [2, -1] has a negative extent"));
  EXPECT_THAT(failure({ExportTensor{"o", DType::F64, {1ll << 40, 1ll << 22}}}),
              HasSubstr("holds more than 2^64 bytes"));
  options.ranks = 0;
  EXPECT_THAT(failure({bytesTensor("a", 1)}), HasSubstr("0 ranks"));
}

TEST(HuggingFaceShardsTest, RandomListsFollowTheRules) {
  std::mt19937_64 rng(14);
  for (int round = 0; round < 300; ++round) {
    uint64_t limit = rng() % 200;
    size_t count = rng() % 40;
    std::vector<ExportTensor> tensors;
    std::vector<uint64_t> sizes;
    for (size_t i = 0; i < count; ++i) {
      int64_t bytes = int64_t(rng() % 4 == 0 ? rng() % 400 : rng() % 60);
      tensors.push_back(bytesTensor("k" + std::to_string(i), bytes));
      sizes.push_back(uint64_t(bytes));
    }
    HuggingFaceShards shards = pack(tensors, limit);
    ASSERT_EQ(shards.layout.tensorCount(), count);
    // Every tensor once, in its file; files in order; byte sums.
    std::vector<uint64_t> bytes(shards.files.size(), 0);
    std::vector<size_t> tensorsIn(shards.files.size(), 0);
    std::vector<size_t> firstOf(shards.files.size(), SIZE_MAX);
    size_t lastFile = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < count; ++i) {
      TensorRef tensor = shards.layout.tensor(TensorId(i));
      ASSERT_EQ(tensor.shardCount(), 1u);
      auto at = std::find(shards.files.begin(), shards.files.end(),
                          tensor.shards()[0].file());
      ASSERT_NE(at, shards.files.end());
      size_t file = size_t(at - shards.files.begin());
      EXPECT_GE(file, lastFile) << "round " << round;
      EXPECT_LE(file, lastFile + 1) << "round " << round;
      lastFile = file;
      bytes[file] += sizes[i];
      ++tensorsIn[file];
      if (firstOf[file] == SIZE_MAX)
        firstOf[file] = i;
      total += sizes[i];
    }
    EXPECT_EQ(bytes, shards.fileBytes);
    EXPECT_EQ(total, shards.totalSize);
    for (size_t file = 0; file < shards.files.size(); ++file) {
      EXPECT_GT(tensorsIn[file], 0u);
      EXPECT_EQ(shards.files[file],
                huggingFaceShardFileName(file, shards.files.size()));
      if (bytes[file] > limit) {
        EXPECT_EQ(tensorsIn[file], 1u) << "round " << round;
      }
      // Greedy: the next file's first tensor did not fit into this one,
      // unless this one is an oversized tensor's own file.
      if (file + 1 < shards.files.size() && bytes[file] <= limit) {
        EXPECT_GT(bytes[file] + sizes[firstOf[file + 1]], limit)
            << "round " << round << " file " << file;
      }
    }
    runtime::Expected<std::string> index =
        formatSafetensorsIndex(shards.layout);
    ASSERT_TRUE(index.ok());
    EXPECT_THAT(*index,
                HasSubstr("\"total_size\": " + std::to_string(total) + "\n"));
  }
}

TEST(HuggingFaceShardsTest, IndexTextIsTransformers) {
  HuggingFaceShards shards =
      pack({bytesTensor("model.b", 6), bytesTensor("model.a", 4),
            bytesTensor("lm_head.weight", 5)},
           10);
  runtime::Expected<std::string> index = formatSafetensorsIndex(shards.layout);
  ASSERT_TRUE(index.ok()) << index.error().toString();
  // json.dumps({"metadata": {"total_size": 15}, "weight_map": {...}},
  //            indent=2, sort_keys=True) + "\n"
  EXPECT_EQ(*index,
            "{\n"
            "  \"metadata\": {\n"
            "    \"total_size\": 15\n"
            "  },\n"
            "  \"weight_map\": {\n"
            "    \"lm_head.weight\": \"model-00002-of-00002.safetensors\",\n"
            "    \"model.a\": \"model-00001-of-00002.safetensors\",\n"
            "    \"model.b\": \"model-00001-of-00002.safetensors\"\n"
            "  }\n"
            "}\n");
  HuggingFaceShards none = pack({}, 10);
  index = formatSafetensorsIndex(none.layout);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(*index, "{\n  \"metadata\": {\n    \"total_size\": 0\n  },\n"
                    "  \"weight_map\": {}\n}\n");
}

TEST(HuggingFaceShardsTest, IndexStringsArePythonJson) {
  std::string out;
  // json.dumps('a"b\\c\n\t\x01\x7f é 中 😀')
  appendPythonJsonString(out, "a\"b\\c\n\t\x01\x7f \xc3\xa9 \xe4\xb8\xad "
                              "\xf0\x9f\x98\x80\b\f\r");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f \\u00e9 \\u4e2d "
                 "\\ud83d\\ude00\\b\\f\\r\"");
  out.clear();
  appendPythonJsonString(out, "bad\xff\xc3");
  EXPECT_EQ(out, "\"bad\\ufffd\\ufffd\"");
}

TEST(HuggingFaceShardsTest, IndexNeedsWholeTensors) {
  ShardMetadataBuilder builder;
  (void)builder.addTensor("w", DType::F32, {4});
  (void)builder.addShard(0, "a.safetensors", "w", {0}, {2});
  (void)builder.addShard(1, "b.safetensors", "w", {2}, {2});
  ShardMetadata split = builder.finish();
  runtime::Expected<std::string> index = formatSafetensorsIndex(split);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.error().message, "tensor 'w': has 2 shards, not one");

  (void)builder.addTensor("v", DType::F32, {4});
  (void)builder.addShard(0, "a.safetensors", "other", {0}, {4});
  ShardMetadata renamed = builder.finish();
  index = formatSafetensorsIndex(renamed);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.error().message,
            "tensor 'v': is stored under another name, 'other'");
}

} // namespace
