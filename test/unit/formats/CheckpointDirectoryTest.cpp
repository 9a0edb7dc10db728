//===- CheckpointDirectoryTest.cpp - Kinds, other files, copies -----------===//
//
// Which kind a directory is (metadata.json > index > model.safetensors >
// *.safetensors), which of its files an export copies, and the copy itself
// (byte for byte, through links, refusing to replace files). Scans of real
// directories and every index error are in test/lit/tools/scan-*.test.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/CheckpointDirectory.h"
#include "aoa/formats/DirectoryScan.h"
#include "aoa/runtime/storage/AtomicFile.h"

#include "ScratchDirectory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace aoa;
using namespace aoa::formats;
using namespace aoa::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

/// A safetensors file holding one F32 [2] tensor per name (zeros).
std::string safetensorsWith(const std::vector<std::string> &names) {
  std::string json = "{";
  for (size_t i = 0; i < names.size(); ++i)
    json += (i ? "," : "") + std::string("\"") + names[i] +
            "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[" +
            std::to_string(8 * i) + "," + std::to_string(8 * i + 8) + "]}";
  json += "}";
  std::string bytes;
  for (int i = 0; i < 8; ++i)
    bytes += static_cast<char>((json.size() >> (8 * i)) & 0xFF);
  return bytes + json + std::string(8 * names.size(), '\0');
}

Expected<CheckpointDirectory> open(const std::string &directory) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  return openCheckpointDirectory(directory, sources, diags);
}

std::vector<std::string> keysOf(const CheckpointDirectory &checkpoint) {
  std::vector<std::string> keys;
  for (TensorRef tensor : checkpoint.metadata.tensors())
    keys.push_back(std::string(tensor.key()) + "@" +
                   std::string(tensor.shards()[0].file()));
  return keys;
}

TEST(CheckpointDirectoryTest, KindsInOrderOfPrecedence) {
  ScratchDirectory dir;
  writeWholeFile(dir.file("b.safetensors"), safetensorsWith({"y"}));
  writeWholeFile(dir.file("a.safetensors"), safetensorsWith({"x", "w"}));
  Expected<CheckpointDirectory> plain = open(dir.path());
  ASSERT_TRUE(plain.ok()) << plain.error().toString();
  EXPECT_EQ(plain->kind, CheckpointKind::SafetensorsFiles);
  EXPECT_EQ(checkpointKindName(plain->kind), "safetensors-files");
  EXPECT_THAT(plain->tensorFiles,
              ElementsAre("a.safetensors", "b.safetensors"));
  EXPECT_THAT(keysOf(*plain), ElementsAre("w@a.safetensors", "x@a.safetensors",
                                          "y@b.safetensors"));
  EXPECT_EQ(plain->tensorBytes, 24u);

  writeWholeFile(dir.file("model.safetensors"), safetensorsWith({"m"}));
  Expected<CheckpointDirectory> single = open(dir.path());
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->kind, CheckpointKind::HuggingFaceSingleFile);
  EXPECT_THAT(keysOf(*single), ElementsAre("m@model.safetensors"));
  EXPECT_THAT(single->ignoredFiles,
              ElementsAre("a.safetensors", "b.safetensors"));

  writeWholeFile(dir.file("model.safetensors.index.json"),
                 R"({"weight_map": {"y": "b.safetensors"}})");
  Expected<CheckpointDirectory> sharded = open(dir.path());
  ASSERT_TRUE(sharded.ok()) << sharded.error().toString();
  EXPECT_EQ(sharded->kind, CheckpointKind::HuggingFaceIndex);
  EXPECT_EQ(sharded->descriptionFile, "model.safetensors.index.json");
  EXPECT_THAT(keysOf(*sharded), ElementsAre("y@b.safetensors"));
  EXPECT_THAT(sharded->ignoredFiles,
              ElementsAre("a.safetensors", "model.safetensors"));

  writeWholeFile(
      dir.file("metadata.json"),
      R"({"format": "aoa-metadata", "version": 1, "tensors": {"x": {"dtype": "float32", "global_shape": [2], "shards": [{"rank": 3, "file": "a.safetensors", "name": "x", "global_offset": [0], "local_shape": [2]}]}}})");
  Expected<CheckpointDirectory> aoa = open(dir.path());
  ASSERT_TRUE(aoa.ok()) << aoa.error().toString();
  EXPECT_EQ(aoa->kind, CheckpointKind::AoaMetadata);
  EXPECT_EQ(aoa->metadata.shard(0).rank(), 3u);
  EXPECT_THAT(aoa->tensorFiles, ElementsAre("a.safetensors"));
  EXPECT_EQ(aoa->tensorBytes, 8u);

  // The scan itself ignores metadata.json.
  Expected<CheckpointDirectory> scanned = scanSafetensorsDirectory(dir.path());
  ASSERT_TRUE(scanned.ok());
  EXPECT_EQ(scanned->kind, CheckpointKind::HuggingFaceIndex);
  EXPECT_THAT(scanned->otherFiles, ElementsAre("metadata.json"));
}

TEST(CheckpointDirectoryTest, BadMetadataJsonIsReportedThroughDiagnostics) {
  ScratchDirectory dir;
  writeWholeFile(dir.file("metadata.json"), "{\"format\": ");
  SourceManager sources;
  DiagnosticEngine diags(sources);
  Expected<CheckpointDirectory> checkpoint =
      openCheckpointDirectory(dir.path(), sources, diags);
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.error().message,
            dir.file("metadata.json") +
                ": the checkpoint's metadata has errors");
  EXPECT_EQ(diags.errorCount(), 1u);
}

TEST(CheckpointDirectoryTest, OtherFilesAreWhatAnExportCopies) {
  ScratchDirectory dir;
  writeWholeFile(dir.file("model.safetensors"), safetensorsWith({"m"}));
  for (const char *name :
       {"config.json", "generation_config.json", "tokenizer.json",
        "tokenizer.model", "special_tokens_map.json", "README.md",
        "training_args.bin", "pytorch_model.bin",
        "pytorch_model-00001-of-00002.bin", "pytorch_model.bin.index.json",
        "consolidated.00.pth", "model.gguf", "model.pdparams", "tf_model.h5",
        ".gitattributes", ".hidden.json"})
    writeWholeFile(dir.file(name), "x");
  ASSERT_EQ(::mkdir(dir.file("original").c_str(), 0777), 0);
  ASSERT_EQ(::symlink("missing-target", dir.file("vocab.txt").c_str()), 0);
  Expected<CheckpointDirectory> checkpoint = open(dir.path());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().toString();
  EXPECT_THAT(checkpoint->otherFiles,
              ElementsAre("README.md", "config.json", "generation_config.json",
                          "special_tokens_map.json", "tokenizer.json",
                          "tokenizer.model", "training_args.bin", "vocab.txt"));
  EXPECT_THAT(checkpoint->ignoredFiles,
              ElementsAre("consolidated.00.pth", "model.gguf", "model.pdparams",
                          "pytorch_model-00001-of-00002.bin",
                          "pytorch_model.bin", "pytorch_model.bin.index.json",
                          "tf_model.h5"));
}

TEST(CheckpointDirectoryTest, NoCheckpoint) {
  ScratchDirectory dir;
  writeWholeFile(dir.file("config.json"), "{}");
  Expected<CheckpointDirectory> checkpoint = open(dir.path());
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.error().message,
            dir.path() + ": no checkpoint here: no metadata.json, "
                         "model.safetensors.index.json, model.safetensors or "
                         "*.safetensors file");
  checkpoint = open(dir.file("config.json"));
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.error().message,
            dir.file("config.json") + ": not a directory");
  checkpoint = open(dir.file("absent"));
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_EQ(checkpoint.error().message,
            dir.file("absent") + ": No such file or directory");
}

// The other files of a Hugging Face directory (config.json, tokenizer
// files) are copied by aoa-run's install (runtime/AtomicFile.h); a Hub
// snapshot holds them as links into ../../blobs.
TEST(CheckpointDirectoryTest, CopiesFilesThroughLinks) {
  ScratchDirectory from;
  ScratchDirectory to;
  std::string bytes;
  for (int i = 0; i < 300000; ++i)
    bytes += static_cast<char>(i * 7 + i / 256);
  writeWholeFile(from.file("blob"), bytes);
  ASSERT_EQ(::symlink("blob", from.file("tokenizer.json").c_str()), 0);
  Status copied = runtime::copyFileAtomically(from.file("tokenizer.json"),
                                              to.file("tokenizer.json"));
  ASSERT_TRUE(copied.ok()) << copied.error().toString();
  EXPECT_THAT(to.list(), ElementsAre("tokenizer.json"));
  EXPECT_EQ(readWholeFile(to.file("tokenizer.json")), bytes);
  // A copy replaces what is there, whole.
  writeWholeFile(from.file("config.json"), "{\"a\": 2}\n");
  writeWholeFile(to.file("config.json"), "{\"a\": 1, \"longer\": true}\n");
  copied = runtime::copyFileAtomically(from.file("config.json"),
                                       to.file("config.json"));
  ASSERT_TRUE(copied.ok()) << copied.error().toString();
  EXPECT_EQ(readWholeFile(to.file("config.json")), "{\"a\": 2}\n");
}

TEST(CheckpointDirectoryTest, AFailedCopyLeavesNothing) {
  ScratchDirectory from;
  ScratchDirectory to;
  ASSERT_EQ(::symlink("nowhere", from.file("b.json").c_str()), 0);
  Status copied =
      runtime::copyFileAtomically(from.file("b.json"), to.file("b.json"));
  ASSERT_FALSE(copied.ok());
  EXPECT_THAT(copied.error().message,
              HasSubstr("b.json' to copy it: No such file or directory"));
  EXPECT_THAT(copied.error().hint, HasSubstr("missing"));
  ASSERT_EQ(::mkdir(from.file("dir").c_str(), 0777), 0);
  copied = runtime::copyFileAtomically(from.file("dir"), to.file("dir"));
  ASSERT_FALSE(copied.ok());
  EXPECT_THAT(copied.error().message, HasSubstr("not a regular file"));
  EXPECT_TRUE(to.list().empty());
}

} // namespace
