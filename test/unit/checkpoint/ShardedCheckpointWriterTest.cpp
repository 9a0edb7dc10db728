//===- ShardedCheckpointWriterTest.cpp - Checkpoints in a given layout ----===//
//
// Every stored tensor is checked against an element-by-element model of
// what its shard holds (a box, or a flat range of a box's row-major
// flattening), computed from the synthetic fill of the whole key; the files
// are read with the plain safetensors reader, not the checkpoint reader.
//
//===----------------------------------------------------------------------===//
#include "aoa/checkpoint/ShardedCheckpointWriter.h"

#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/formats/metadata/MetadataLoader.h"
#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/support/ContentHash.h"

#include "BruteForce.h"
#include "CheckpointTestSupport.h"
#include "ScratchDirectory.h"

#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::checkpoint;
using namespace aoa::runtime;
using aoa::test::LayoutBuilder;
using aoa::test::ScratchDirectory;

namespace {

/// The bytes `shard` must store: the fill of its whole key, picked element
/// by element.
std::vector<std::byte> expectedStored(const ShardMetadata &layout,
                                      ShardRef shard,
                                      SyntheticFill fill = test::kRandomFill) {
  TensorRef tensor = layout.tensor(shard.tensorId());
  size_t size = dtypeSize(tensor.dtype());
  Box whole = Box::fromShape(tensor.globalShape());
  std::vector<std::byte> all(size_t(whole.volume()) * size);
  EXPECT_TRUE(fillSynthetic(fill, tensor.key(), tensor.dtype(),
                            tensor.globalShape(), whole, all.data(), all.size())
                  .ok());
  std::vector<std::byte> stored;
  std::optional<FlatElementRange> flat = shard.flatRange();
  int64_t position = 0;
  test::forEachPoint(
      Box(shard.globalOffset(), shard.localShape()), [&](const test::Point &p) {
        int64_t at = position++;
        if (flat && (at < flat->begin || at >= flat->end))
          return;
        const std::byte *element = all.data() + *rowMajorIndex(whole, p) * size;
        stored.insert(stored.end(), element, element + size);
      });
  return stored;
}

std::vector<std::byte> readStored(const std::string &path,
                                  std::string_view name) {
  Expected<SafetensorsReader> file = SafetensorsReader::open(path);
  EXPECT_TRUE(file.ok()) << file.error().toString();
  if (!file.ok())
    return {};
  const SafetensorsTensor *tensor = file->find(name);
  EXPECT_NE(tensor, nullptr) << path << " " << name;
  if (!tensor)
    return {};
  std::vector<std::byte> bytes(tensor->byteSize());
  EXPECT_TRUE(file->readTensor(*tensor, bytes.data(), bytes.size()).ok());
  return bytes;
}

TEST(ShardedCheckpointWriter, WritesEveryShardWithItsDataAndHash) {
  ScratchDirectory dir;
  ShardMetadata layout = test::mixedLayout();
  WrittenCheckpoint written = test::writeSynthetic(layout, dir.path());
  EXPECT_EQ(written.fileCount, 4u);
  EXPECT_EQ(dir.list(), (std::vector<std::string>{
                            "metadata.json", "r0.safetensors", "r1.safetensors",
                            "r2.safetensors", "r3.safetensors"}));
  uint64_t bytes = 0;
  for (ShardRef shard :
       IdRange<ShardRef>(&layout, 0, uint32_t(layout.shardCount()))) {
    SCOPED_TRACE(std::string(shard.file()) + " " + std::string(shard.name()));
    std::vector<std::byte> stored =
        readStored(dir.file(std::string(shard.file())), shard.name());
    EXPECT_EQ(stored, expectedStored(layout, shard));
    EXPECT_EQ(written.metadata.shard(shard.id()).contentHash(),
              contentHash(stored.data(), stored.size()));
    bytes += stored.size();
  }
  EXPECT_EQ(written.dataBytes, bytes);

  // metadata.json is the layout plus the hashes.
  std::string text = test::readWholeFile(dir.file("metadata.json"));
  EXPECT_EQ(text, printShardMetadata(written.metadata));
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::optional<ShardMetadata> loaded =
      loadShardMetadataText("metadata.json", text, sources, diags);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(printShardMetadata(*loaded), text);
  std::string withoutHashes = text;
  for (size_t at;
       (at = withoutHashes.find(", \"xxh3\": \"")) != std::string::npos;)
    withoutHashes.erase(at,
                        std::string(", \"xxh3\": \"0123456789abcdef\"").size());
  EXPECT_EQ(withoutHashes, printShardMetadata(layout));
}

TEST(ShardedCheckpointWriter, ReshardsACheckpointAndAFileOfWholeTensors) {
  ScratchDirectory tp2, tp4, fromCheckpoint, fromFile;
  LayoutBuilder two;
  two.key("a", DType::F16, {8, 6})
      .shard(0, "tp0.safetensors", {0, 0}, {4, 6})
      .shard(1, "tp1.safetensors", {4, 0}, {4, 6});
  two.key("b", DType::F32, {5, 4})
      .shard(0, "tp0.safetensors", {0, 0}, {5, 4}, FlatElementRange{0, 7})
      .shard(1, "tp1.safetensors", {0, 0}, {5, 4}, FlatElementRange{7, 20});
  LayoutBuilder layout4;
  layout4.key("a", DType::F16, {8, 6});
  for (int r = 0; r < 4; ++r)
    layout4.shard(r, "tp" + std::to_string(r) + ".safetensors", {0, 0}, {8, 6},
                  FlatElementRange{r * 12, r * 12 + 12});
  layout4.key("b", DType::F32, {5, 4});
  for (int r = 0; r < 4; ++r)
    layout4.shard(r, "tp" + std::to_string(r) + ".safetensors", {0, r}, {5, 1});
  ShardMetadata source = two.finish(), target = layout4.finish();

  test::writeSynthetic(source, tp2.path());
  test::writeSynthetic(target, tp4.path());

  // From the TP2 checkpoint.
  CheckpointReader reader(tp2.path(), source.clone());
  std::unique_ptr<TensorSupplier> checkpoint = makeCheckpointSupplier(reader);
  Expected<WrittenCheckpoint> resharded =
      writeShardedCheckpoint(target, *checkpoint, fromCheckpoint.path());
  ASSERT_TRUE(resharded.ok()) << resharded.error().toString();

  // From one file of whole tensors.
  {
    Expected<SafetensorsWriter> whole =
        SafetensorsWriter::create(tp2.file("whole.safetensors"),
                                  {TensorDeclaration{"a", DType::F16, {8, 6}},
                                   TensorDeclaration{"b", DType::F32, {5, 4}}});
    ASSERT_TRUE(whole.ok());
    for (TensorRef key : source.tensors()) {
      std::vector<std::byte> data(size_t(48) * 4);
      size_t size = size_t(Box::fromShape(key.globalShape()).volume()) *
                    dtypeSize(key.dtype());
      ASSERT_TRUE(fillSynthetic(test::kRandomFill, key.key(), key.dtype(),
                                key.globalShape(),
                                Box::fromShape(key.globalShape()), data.data(),
                                size)
                      .ok());
      ASSERT_TRUE(whole->writeTensor(key.key(), data.data(), size).ok());
    }
    ASSERT_TRUE(whole->commit().ok());
  }
  Expected<std::unique_ptr<TensorSupplier>> file =
      openSafetensorsSupplier(tp2.file("whole.safetensors"));
  ASSERT_TRUE(file.ok()) << file.error().toString();
  EXPECT_EQ((*file)->description(), tp2.file("whole.safetensors"));
  ShardedCheckpointWriterOptions bigChunks;
  bigChunks.chunkBytes = 1 << 20;
  ASSERT_TRUE(
      writeShardedCheckpoint(target, **file, fromFile.path(), bigChunks).ok());

  // Same layout, same values: byte for byte the same files.
  for (const char *name :
       {"metadata.json", "tp0.safetensors", "tp1.safetensors",
        "tp2.safetensors", "tp3.safetensors"}) {
    std::string expected = test::readWholeFile(tp4.file(name));
    EXPECT_EQ(test::readWholeFile(fromCheckpoint.file(name)), expected) << name;
    EXPECT_EQ(test::readWholeFile(fromFile.file(name)), expected) << name;
  }
}

/// Writes `layout` from `supplier` into a fresh directory and returns the
/// error; the directory must stay empty.
Error expectFailure(const ShardMetadata &layout, const TensorSupplier &supplier,
                    ShardedCheckpointWriterOptions options = {}) {
  ScratchDirectory dir;
  Expected<WrittenCheckpoint> written =
      writeShardedCheckpoint(layout, supplier, dir.file("out"), options);
  EXPECT_FALSE(written.ok());
  if (test::fileExists(dir.file("out"))) {
    EXPECT_TRUE(std::filesystem::is_empty(dir.file("out")));
  }
  return written.ok() ? Error{} : written.error();
}

TEST(ShardedCheckpointWriterErrors, SupplierWithOtherKeys) {
  ScratchDirectory dir;
  {
    Expected<SafetensorsWriter> file =
        SafetensorsWriter::create(dir.file("whole.safetensors"),
                                  {TensorDeclaration{"a", DType::F32, {2, 2}}});
    ASSERT_TRUE(file.ok());
    float zeros[4] = {0, 0, 0, 0};
    ASSERT_TRUE(file->writeTensor("a", zeros, sizeof(zeros)).ok());
    ASSERT_TRUE(file->commit().ok());
  }
  Expected<std::unique_ptr<TensorSupplier>> whole =
      openSafetensorsSupplier(dir.file("whole.safetensors"));
  ASSERT_TRUE(whole.ok());

  LayoutBuilder wrongDType;
  wrongDType.key("a", DType::BF16, {2, 2}).shard(0, "f", {0, 0}, {2, 2});
  Error dtype = expectFailure(wrongDType.finish(), **whole);
  EXPECT_EQ(dtype.message, "key 'a': the layout has bfloat16 [2, 2], but " +
                               dir.file("whole.safetensors") +
                               " has float32 [2, 2]");
  EXPECT_NE(dtype.hint.find("aoa-compile"), std::string::npos);

  LayoutBuilder wrongShape;
  wrongShape.key("a", DType::F32, {4}).shard(0, "f", {0}, {4});
  EXPECT_EQ(expectFailure(wrongShape.finish(), **whole).message,
            "key 'a': the layout has float32 [4], but " +
                dir.file("whole.safetensors") + " has float32 [2, 2]");

  LayoutBuilder missing;
  missing.key("a", DType::F32, {2, 2}).shard(0, "f", {0, 0}, {2, 2});
  missing.key("z", DType::F32, {2}).shard(0, "f", {0}, {2});
  EXPECT_EQ(expectFailure(missing.finish(), **whole).message,
            "key 'z' of the layout is not in " + dir.file("whole.safetensors"));

  Expected<std::unique_ptr<TensorSupplier>> absent =
      openSafetensorsSupplier(dir.file("absent.safetensors"));
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().message,
            dir.file("absent.safetensors") + ": the file does not exist");

  // A checkpoint without the key.
  CheckpointReader reader(dir.path(), LayoutBuilder()
                                          .key("b", DType::F32, {4})
                                          .shard(0, "f", {0}, {4})
                                          .finish());
  std::unique_ptr<TensorSupplier> checkpoint = makeCheckpointSupplier(reader);
  LayoutBuilder other;
  other.key("a", DType::F32, {4}).shard(0, "f", {0}, {4});
  EXPECT_EQ(expectFailure(other.finish(), *checkpoint).message,
            "key 'a' of the layout is not in checkpoint " + dir.path());
}

TEST(ShardedCheckpointWriterErrors, BadLayouts) {
  std::unique_ptr<TensorSupplier> fill =
      makeSyntheticSupplier(test::kRandomFill);
  LayoutBuilder twice;
  twice.key("a", DType::F32, {4})
      .shard(0, "f.safetensors", {0}, {2}, std::nullopt, "x")
      .shard(0, "f.safetensors", {2}, {2}, std::nullopt, "x");
  Error duplicate = expectFailure(twice.finish(), *fill);
  EXPECT_EQ(duplicate.message,
            "layout: file 'f.safetensors' would hold two tensors named 'x' "
            "(shard 0 of key 'a' and shard 1 of key 'a')");

  LayoutBuilder escape;
  escape.key("a", DType::F32, {4}).shard(0, "../f.safetensors", {0}, {4});
  EXPECT_EQ(expectFailure(escape.finish(), *fill).message,
            "layout: file name '../f.safetensors' does not name a file inside "
            "the output directory");
  LayoutBuilder absolute;
  absolute.key("a", DType::F32, {4}).shard(0, "/tmp/f.safetensors", {0}, {4});
  EXPECT_FALSE(expectFailure(absolute.finish(), *fill).message.empty());
  LayoutBuilder metadata;
  metadata.key("a", DType::F32, {4}).shard(0, "metadata.json", {0}, {4});
  EXPECT_EQ(expectFailure(metadata.finish(), *fill).message,
            "layout: a data file may not be called 'metadata.json'");

  LayoutBuilder outside;
  outside.key("a", DType::F32, {4}).shard(0, "f", {2}, {3});
  EXPECT_EQ(expectFailure(outside.finish(), *fill).message,
            "layout: shard 0 of key 'a': elements [2:5] are not inside "
            "global_shape [4]");
  LayoutBuilder flat;
  flat.key("a", DType::F32, {4})
      .shard(0, "f", {0}, {4}, FlatElementRange{2, 5});
  EXPECT_EQ(expectFailure(flat.finish(), *fill).message,
            "layout: shard 0 of key 'a': flat_range [2, 5) is not inside its "
            "4 elements");
}

TEST(ShardedCheckpointWriterErrors, ExistingFilesNeedOverwrite) {
  ScratchDirectory dir;
  LayoutBuilder b;
  b.key("a", DType::F32, {4}).shard(0, "f.safetensors", {0}, {4});
  ShardMetadata layout = b.finish();
  test::writeSynthetic(layout, dir.path());
  std::string before = test::readWholeFile(dir.file("f.safetensors"));
  std::unique_ptr<TensorSupplier> iota =
      makeSyntheticSupplier(SyntheticFill{SyntheticFill::Kind::Iota, 0});
  Expected<WrittenCheckpoint> refused =
      writeShardedCheckpoint(layout, *iota, dir.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            dir.file("metadata.json") + ": already exists");
  EXPECT_EQ(test::readWholeFile(dir.file("f.safetensors")), before);

  ShardedCheckpointWriterOptions overwrite;
  overwrite.overwrite = true;
  ASSERT_TRUE(
      writeShardedCheckpoint(layout, *iota, dir.path(), overwrite).ok());
  EXPECT_NE(test::readWholeFile(dir.file("f.safetensors")), before);
}

/// Supplies the fill, but fails for the rows from `firstBadRow` of one key.
class FailingSupplier final : public TensorSupplier {
public:
  FailingSupplier(std::string failingKey, int64_t firstBadRow)
      : fill_(makeSyntheticSupplier(test::kRandomFill)),
        failingKey_(std::move(failingKey)), firstBadRow_(firstBadRow) {}
  std::string description() const override { return "failing"; }
  Status check(TensorRef) const override { return Status(); }
  Status read(TensorRef key, const Box &region, void *buffer,
              size_t size) const override {
    if (key.key() == failingKey_ && region.dim(0).end > firstBadRow_)
      return Error{"cannot read " + failingKey_, ""};
    return fill_->read(key, region, buffer, size);
  }

private:
  std::unique_ptr<TensorSupplier> fill_;
  std::string failingKey_;
  int64_t firstBadRow_;
};

TEST(ShardedCheckpointWriterErrors, AFailureTakesBackCommittedFiles) {
  ScratchDirectory dir;
  // Rows 2..3 of "v" are in r3.safetensors, the last file: r0..r2 are
  // committed by then.
  FailingSupplier supplier("v", 2);
  Expected<WrittenCheckpoint> written =
      writeShardedCheckpoint(test::mixedLayout(), supplier, dir.path());
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().message, "cannot read v");
  EXPECT_TRUE(dir.list().empty()) << dir.list().size();
}

} // namespace
