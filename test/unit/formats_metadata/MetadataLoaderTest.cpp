//===- MetadataLoaderTest.cpp - Loading valid metadata --------------------===//
//
// Metadata the loader accepts: the writer's output read back, any field
// order, escapes and whitespace, content hashes, files on disk (mapped or
// read). Rejections are in MetadataLoaderErrorsTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/MetadataLoader.h"
#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/ir/ShardMetadata.h"

#include "MetadataTestSupport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace aoa;
using namespace aoa::test;

namespace {

TEST(MetadataLoader, RoundTripsThroughTheWriter) {
  ShardMetadata original = buildSample();
  std::string text = printShardMetadata(original);
  Loaded loaded(text);
  ASSERT_TRUE(loaded.metadata) << loaded.all();
  EXPECT_TRUE(loaded.diagnostics.empty());
  expectSample(*loaded.metadata);
  EXPECT_EQ(printShardMetadata(*loaded.metadata), text);
}

TEST(MetadataLoader, WriterOutputIsOneShardPerLine) {
  ShardMetadataBuilder b;
  ASSERT_TRUE(b.addTensor("k", DType::BF16, {4, 2}));
  ASSERT_TRUE(b.addShard(0, "f0", "k", {0, 0}, {2, 2}));
  std::optional<ShardId> flat =
      b.addShard(1, "f1", "k", {2, 0}, {2, 2}, FlatElementRange{1, 3});
  ASSERT_TRUE(flat);
  b.setContentHash(*flat, 0x00ab00000000cd01u);
  EXPECT_EQ(printShardMetadata(b.finish()),
            "{\"format\": \"aoa-metadata\", \"version\": 1, \"tensors\": {\n"
            "\"k\": {\"dtype\": \"bfloat16\", \"global_shape\": [4, 2], "
            "\"shards\": [\n"
            "  {\"rank\": 0, \"file\": \"f0\", \"name\": \"k\", "
            "\"global_offset\": [0, 0], \"local_shape\": [2, 2]},\n"
            "  {\"rank\": 1, \"file\": \"f1\", \"name\": \"k\", "
            "\"global_offset\": [2, 0], \"local_shape\": [2, 2], "
            "\"flat_range\": [1, 3], \"xxh3\": \"00ab00000000cd01\"}]}\n"
            "}}\n");
}

TEST(MetadataLoader, AcceptsAnyFieldOrderEscapesAndWhitespace) {
  // Shards before global_shape, format last, escaped key and name, compact
  // and spread-out whitespace, a tensor with no dimensions.
  std::string text =
      "{\"tensors\":{\"a\\\"b\\u00e9\":{\"shards\":[{\"local_shape\":[2],"
      "\"global_offset\":[2],\"name\":\"n\\\\1\",\"file\":\"f\",\"rank\":3,"
      "\"flat_range\":[0,1]}],\"global_shape\":[4],\"dtype\":\"float16\"},\n"
      "  \"s\" : { \"dtype\" : \"bool\" , \"global_shape\" : [ ] , "
      "\"shards\" : [ { \"rank\" : 0 , \"file\" : \"g\" , \"name\" : \"s\" , "
      "\"global_offset\" : [ ] , \"local_shape\" : [ ] } ] } } ,\n"
      "\"version\": 1, \"format\": \"aoa-metadata\"}";
  Loaded loaded(text);
  ASSERT_TRUE(loaded.metadata) << loaded.all();
  const ShardMetadata &m = *loaded.metadata;
  ASSERT_EQ(m.tensorCount(), 2u);
  std::optional<TensorRef> a = m.find("a\"b\xc3\xa9");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->dtype(), DType::F16);
  EXPECT_EQ(vec(a->globalShape()), (std::vector<int64_t>{4}));
  ShardRef s = a->shards()[0];
  EXPECT_EQ(s.rank(), 3u);
  EXPECT_EQ(s.name(), "n\\1");
  EXPECT_EQ(vec(s.globalOffset()), (std::vector<int64_t>{2}));
  EXPECT_EQ(s.flatRange(), (FlatElementRange{0, 1}));
  std::optional<TensorRef> scalar = m.find("s");
  ASSERT_TRUE(scalar);
  EXPECT_EQ(scalar->dtype(), DType::Bool);
  EXPECT_EQ(scalar->ndim(), 0u);
  // Escaped strings survive a round trip through the writer.
  Loaded again(printShardMetadata(m));
  ASSERT_TRUE(again.metadata) << again.all();
  EXPECT_EQ(again.metadata->find("a\"b\xc3\xa9")->shards()[0].name(), "n\\1");
}

TEST(MetadataLoader, ReadsContentHashesInEitherCase) {
  std::string text = tensorW(
      shard("[0, 0]", "[512, 512]", ", \"xxh3\": \"2D06800538d394C2\"") +
      ",\n" + shard("[512, 0]", "[512, 512]") + ",\n" +
      // Before the other fields, and on a flat shard.
      "  {\"xxh3\": \"0000000000000000\", \"rank\": 1, \"file\": \"g\", "
      "\"name\": \"w\", \"global_offset\": [512, 0], \"local_shape\": [512, "
      "512], \"flat_range\": [0, 10]}");
  Loaded loaded(text);
  ASSERT_TRUE(loaded.metadata) << loaded.all();
  TensorRef w = loaded.metadata->tensor(0);
  EXPECT_EQ(w.shards()[0].contentHash(), 0x2d06800538d394c2u);
  EXPECT_FALSE(w.shards()[1].contentHash());
  EXPECT_EQ(w.shards()[2].contentHash(), 0u);
  // The writer spells them in lowercase, last; the text loads back the same.
  std::string written = printShardMetadata(*loaded.metadata);
  EXPECT_NE(written.find("\"local_shape\": [512, 512], \"xxh3\": "
                         "\"2d06800538d394c2\"}"),
            std::string::npos)
      << written;
  EXPECT_NE(written.find("\"flat_range\": [0, 10], \"xxh3\": "
                         "\"0000000000000000\"}"),
            std::string::npos)
      << written;
  Loaded again(written);
  ASSERT_TRUE(again.metadata) << again.all();
  EXPECT_EQ(printShardMetadata(*again.metadata), written);
  EXPECT_EQ(printShardMetadata(again.metadata->clone()), written);
}

TEST(MetadataLoader, AcceptsAnEmptyTensorObject) {
  Loaded loaded("{\"format\": \"aoa-metadata\", \"version\": 1, "
                "\"tensors\": {}}");
  ASSERT_TRUE(loaded.metadata) << loaded.all();
  EXPECT_EQ(loaded.metadata->tensorCount(), 0u);
  EXPECT_TRUE(loaded.metadata->tensorIdsByKey().empty());
}

TEST(MetadataLoader, RegistersTheTextOnlyForDiagnostics) {
  Loaded clean(printShardMetadata(buildSample()));
  ASSERT_TRUE(clean.metadata);
  EXPECT_EQ(clean.sources.bufferCount(), 0u);
  Loaded bad(tensorW(shard("[0, 0]", "[512, 512]", "", -1)));
  EXPECT_FALSE(bad.metadata);
  EXPECT_EQ(bad.sources.bufferCount(), 1u);
}

/// A file large enough to be memory-mapped, written and loaded from disk.
TEST(MetadataLoader, LoadsLargeAndSmallFilesFromDisk) {
  ShardMetadataBuilder b;
  for (int t = 0; t < 2000; ++t) {
    std::string key = "model.layers." + std::to_string(t) + ".weight";
    ASSERT_TRUE(b.addTensor(key, DType::BF16, {4096, 1024}));
    for (int r = 0; r < 8; ++r)
      ASSERT_TRUE(b.addShard(r, "rank" + std::to_string(r) + ".safetensors",
                             key, {512 * r, 0}, {512, 1024}));
  }
  ShardMetadata big = b.finish();
  std::string text = printShardMetadata(big);
  ASSERT_GT(text.size(), 2u << 20) << "large enough to be mapped";

  char path[] = "/tmp/aoa-metadata-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  for (const std::string &content : {text, printShardMetadata(buildSample())}) {
    {
      std::ofstream out(path, std::ios::binary);
      out << content;
    }
    SourceManager sources;
    DiagnosticEngine diags(sources);
    std::optional<ShardMetadata> loaded =
        loadShardMetadata(path, sources, diags);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(printShardMetadata(*loaded), content);
  }
  std::remove(path);
}

} // namespace
