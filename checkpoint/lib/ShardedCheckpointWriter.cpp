//===- ShardedCheckpointWriter.cpp ----------------------------------------===//
#include "aoa/checkpoint/ShardedCheckpointWriter.h"

#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/ir/RowMajorChunks.h"
#include "aoa/runtime/storage/AtomicFile.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/support/ContentHash.h"

#include "aoa/ir/ShardGeometry.h"
#include "aoa/runtime/support/Messages.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <system_error>

namespace aoa::checkpoint {

using namespace runtime;

namespace {

namespace fs = std::filesystem;

const char *const kLayoutHint =
    "the layout is not valid shard metadata; load it with the metadata "
    "loader, which checks its geometry";

std::string shardName(TensorRef tensor, ShardRef shard) {
  return "shard " + std::to_string(shard.id() - tensor.firstShard()) +
         " of key " + quoteName(tensor.key());
}

/// Geometry the loader guarantees, checked again for layouts built in code.
Status checkLayoutGeometry(const ShardMetadata &layout) {
  for (TensorRef tensor : layout.tensors()) {
    Box whole = Box::fromShape(tensor.globalShape());
    for (ShardRef shard : tensor.shards()) {
      std::optional<Box> box =
          Box::fromOffsetShape(shard.globalOffset(), shard.localShape());
      if (!box || !whole.contains(*box))
        return Error{
            "layout: " + shardName(tensor, shard) + ": elements " +
                formatElementRange(shard.globalOffset(), shard.localShape()) +
                " are not inside global_shape " +
                formatExtents(tensor.globalShape()),
            kLayoutHint};
      std::optional<FlatElementRange> flat = shard.flatRange();
      if (flat && (flat->begin < 0 || flat->begin > flat->end ||
                   flat->end > box->volume()))
        return Error{"layout: " + shardName(tensor, shard) + ": flat_range [" +
                         std::to_string(flat->begin) + ", " +
                         std::to_string(flat->end) + ") is not inside its " +
                         std::to_string(box->volume()) + " elements",
                     kLayoutHint};
    }
  }
  return Status();
}

/// A layout's file name must name a file inside the output directory.
Status checkFileName(std::string_view name) {
  fs::path path{std::string(name)};
  bool escapes = path.is_absolute() || name.empty();
  for (const fs::path &part : path)
    escapes |= part == "..";
  if (escapes)
    return Error{"layout: file name " + quoteName(name) +
                     " does not name a file inside the output directory",
                 "file names in a layout are relative paths without '..'"};
  if (name == "metadata.json")
    return Error{"layout: a data file may not be called 'metadata.json'",
                 "metadata.json is the checkpoint's shard metadata; rename "
                 "the data file in the layout"};
  return Status();
}

/// Copies the layout, adding a content hash to every shard.
ShardMetadata withHashes(const ShardMetadata &layout,
                         const std::vector<uint64_t> &hashes) {
  ShardMetadataBuilder builder;
  builder.reserve(layout.tensorCount(), layout.shardCount(),
                  /*coordinates=*/0);
  for (TensorRef tensor : layout.tensors()) {
    // Keys are unique in the layout, so neither call can be refused.
    (void)builder.addTensor(tensor.key(), tensor.dtype(), tensor.globalShape());
    for (ShardRef shard : tensor.shards()) {
      std::optional<ShardId> id = builder.addShard(
          shard.rank(), shard.file(), shard.name(), shard.globalOffset(),
          shard.localShape(), shard.flatRange());
      if (id)
        builder.setContentHash(*id, hashes[shard.id()]);
    }
  }
  return builder.finish();
}

/// Writes a checkpoint's files one after another, remembering the ones it
/// committed so that a failure can take them back.
class CheckpointFileWriter {
public:
  CheckpointFileWriter(const ShardMetadata &layout,
                       const TensorSupplier &supplier, std::string directory,
                       size_t chunkBytes)
      : layout_(layout), supplier_(supplier), directory_(std::move(directory)),
        chunkBytes_(chunkBytes), hashes_(layout.shardCount(), 0) {}
  CheckpointFileWriter(const CheckpointFileWriter &) = delete;
  CheckpointFileWriter &operator=(const CheckpointFileWriter &) = delete;
  ~CheckpointFileWriter() {
    if (done_)
      return;
    std::error_code ignored;
    for (const std::string &path : committed_)
      fs::remove(path, ignored);
  }

  std::string pathOf(uint32_t fileId) const {
    return (fs::path(directory_) / std::string(layout_.files().get(fileId)))
        .string();
  }

  Status writeFile(uint32_t fileId, const std::vector<ShardId> &shards);
  /// Keeps the files (the checkpoint is complete).
  void finish() { done_ = true; }

  const std::vector<uint64_t> &hashes() const { return hashes_; }
  uint64_t dataBytes() const { return dataBytes_; }

private:
  Status writeShard(SafetensorsWriter &file, ShardRef shard);

  const ShardMetadata &layout_;
  const TensorSupplier &supplier_;
  std::string directory_;
  size_t chunkBytes_;
  std::vector<uint64_t> hashes_;
  std::vector<std::string> committed_;
  std::vector<std::byte> buffer_;
  uint64_t dataBytes_ = 0;
  bool done_ = false;
};

Status CheckpointFileWriter::writeFile(uint32_t fileId,
                                       const std::vector<ShardId> &shards) {
  std::string path = pathOf(fileId);
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  if (error)
    return Error{"cannot create the directory of " + quoteName(path) + ": " +
                     error.message(),
                 kSystemErrorHint};
  std::vector<TensorDeclaration> declarations;
  for (ShardId id : shards) {
    ShardRef shard = layout_.shard(id);
    declarations.push_back(TensorDeclaration{
        std::string(shard.name()), layout_.tensor(shard.tensorId()).dtype(),
        storedShape(shard)});
  }
  Expected<SafetensorsWriter> file =
      SafetensorsWriter::create(path, std::move(declarations));
  if (!file)
    return file.error();
  for (ShardId id : shards)
    if (Status written = writeShard(*file, layout_.shard(id)); !written)
      return written;
  if (Status committed = file->commit(); !committed)
    return committed;
  committed_.push_back(path);
  return Status();
}

Status CheckpointFileWriter::writeShard(SafetensorsWriter &file,
                                        ShardRef shard) {
  TensorRef tensor = layout_.tensor(shard.tensorId());
  size_t elementSize = dtypeSize(tensor.dtype());
  int64_t chunkElements =
      std::max<int64_t>(1, int64_t(chunkBytes_ / elementSize));
  ContentHasher hasher;
  uint64_t offset = 0;
  Status failure;
  // Stored boxes follow each other in storage order, and so do the chunks
  // of each: the data is written and hashed front to back.
  for (const Box &box : storedBoxes(shard)) {
    forEachRowMajorChunk(box, chunkElements, [&](const Box &chunk) {
      size_t size = size_t(chunk.volume()) * elementSize;
      buffer_.resize(size);
      failure = supplier_.read(tensor, chunk, buffer_.data(), size);
      if (failure)
        failure = file.write(shard.name(), offset, buffer_.data(), size);
      if (!failure)
        return false;
      hasher.update(buffer_.data(), size);
      offset += size;
      return true;
    });
    if (!failure)
      return failure;
  }
  hashes_[shard.id()] = hasher.digest();
  dataBytes_ += offset;
  return Status();
}

} // namespace

Expected<WrittenCheckpoint>
writeShardedCheckpoint(const ShardMetadata &layout,
                       const TensorSupplier &supplier,
                       const std::string &directory,
                       const ShardedCheckpointWriterOptions &options) {
  // Everything is checked before anything is written.
  if (Status geometry = checkLayoutGeometry(layout); !geometry)
    return geometry.error();
  for (TensorRef tensor : layout.tensors())
    if (Status checked = supplier.check(tensor); !checked)
      return checked.error();

  std::vector<std::vector<ShardId>> shardsOfFile(layout.files().size());
  for (ShardId id = 0; id < layout.shardCount(); ++id)
    shardsOfFile[layout.shard(id).fileId()].push_back(id);
  for (uint32_t fileId = 0; fileId < shardsOfFile.size(); ++fileId) {
    if (shardsOfFile[fileId].empty())
      continue;
    std::string_view fileName = layout.files().get(fileId);
    if (Status name = checkFileName(fileName); !name)
      return name.error();
    llvm::StringMap<ShardId> names;
    for (ShardId id : shardsOfFile[fileId]) {
      ShardRef shard = layout.shard(id);
      auto [place, inserted] = names.try_emplace(shard.name(), id);
      if (!inserted) {
        ShardRef first = layout.shard(place->second);
        return Error{
            "layout: file " + quoteName(fileName) +
                " would hold two tensors named " + quoteName(shard.name()) +
                " (" + shardName(layout.tensor(first.tensorId()), first) +
                " and " + shardName(layout.tensor(shard.tensorId()), shard) +
                ")",
            "give the shards different names, or put them in "
            "different files"};
      }
    }
  }

  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    return Error{"cannot create the output directory " + quoteName(directory) +
                     ": " + error.message(),
                 kSystemErrorHint};
  CheckpointFileWriter files(layout, supplier, directory, options.chunkBytes);
  std::string metadataPath = (fs::path(directory) / "metadata.json").string();
  if (!options.overwrite) {
    std::vector<std::string> targets = {metadataPath};
    for (uint32_t fileId = 0; fileId < shardsOfFile.size(); ++fileId)
      if (!shardsOfFile[fileId].empty())
        targets.push_back(files.pathOf(fileId));
    for (const std::string &target : targets)
      if (fs::exists(fs::symlink_status(target, error)))
        return Error{storageMessage(target, "already exists"),
                     "write into an empty directory, or allow replacing "
                     "existing files (aoa-shard --overwrite)"};
  }

  size_t fileCount = 0;
  for (uint32_t fileId = 0; fileId < shardsOfFile.size(); ++fileId) {
    if (shardsOfFile[fileId].empty())
      continue;
    if (Status written = files.writeFile(fileId, shardsOfFile[fileId]);
        !written)
      return written.error();
    ++fileCount;
  }

  ShardMetadata written = withHashes(layout, files.hashes());
  std::ostringstream text;
  writeShardMetadata(written, text);
  if (Status saved = writeFileAtomically(metadataPath, text.str()); !saved)
    return saved.error();
  files.finish();
  return WrittenCheckpoint{std::move(written), fileCount, files.dataBytes()};
}

} // namespace aoa::checkpoint
