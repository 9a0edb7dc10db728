//===- CheckpointReader.cpp -----------------------------------------------===//
//
// readRegion keeps the part of the region still to fill as a list of
// disjoint boxes. Each shard (a flat shard: each box of its flat range) that
// meets the region is read once, over its whole intersection with the
// region; the still-missing parts are copied into the buffer and subtracted
// from the list, and, when replicas are checked, the parts already filled
// are handed to the caller. Whatever is left at the end is stored nowhere.
//
//===----------------------------------------------------------------------===//
#include "aoa/checkpoint/CheckpointReader.h"

#include "aoa/ir/ContentHashText.h"
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/storage/StoredRegion.h"
#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/transforms/RegionCopy.h"

#include "aoa/ir/ShardGeometry.h"
#include "aoa/runtime/support/Messages.h"

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <sys/stat.h>
#include <unordered_map>

namespace aoa::checkpoint {

using namespace runtime;

namespace {

const char *const kMismatchHint =
    "the file does not match the checkpoint's metadata: it was replaced, "
    "rewritten, or belongs to another checkpoint";


} // namespace

//===----------------------------------------------------------------------===//
// Open files
//===----------------------------------------------------------------------===//

/// Readers by file id, at most `limit` open; the least recently used one is
/// closed to make room (a reader still in use stays alive through its
/// shared_ptr until its user lets go).
class CheckpointReader::FileCache {
public:
  explicit FileCache(size_t limit) : limit_(std::max<size_t>(limit, 1)) {}

  Expected<std::shared_ptr<const SafetensorsReader>>
  open(uint32_t fileId, const std::string &path) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = entries_.find(fileId);
    if (found != entries_.end()) {
      found->second.lastUse = ++clock_;
      return found->second.reader;
    }
    Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
    if (!reader)
      return reader.error();
    if (entries_.size() >= limit_) {
      auto oldest = std::min_element(
          entries_.begin(), entries_.end(), [](const auto &a, const auto &b) {
            return a.second.lastUse < b.second.lastUse;
          });
      entries_.erase(oldest);
    }
    auto shared = std::make_shared<const SafetensorsReader>(std::move(*reader));
    entries_[fileId] = Entry{shared, ++clock_};
    return shared;
  }

private:
  struct Entry {
    std::shared_ptr<const SafetensorsReader> reader;
    uint64_t lastUse = 0;
  };
  std::mutex mutex_;
  std::unordered_map<uint32_t, Entry> entries_;
  uint64_t clock_ = 0;
  size_t limit_;
};

struct CheckpointReader::StoredTensor {
  std::shared_ptr<const SafetensorsReader> file;
  const SafetensorsTensor *entry = nullptr;
};

CheckpointReader::CheckpointReader(std::string directory,
                                   ShardMetadata metadata,
                                   CheckpointReaderOptions options)
    : directory_(std::move(directory)), metadata_(std::move(metadata)),
      options_(options),
      files_(std::make_unique<FileCache>(options.maxOpenFiles)) {}
CheckpointReader::CheckpointReader(CheckpointReader &&) noexcept = default;
CheckpointReader &
CheckpointReader::operator=(CheckpointReader &&) noexcept = default;
CheckpointReader::~CheckpointReader() = default;

std::string CheckpointReader::filePath(uint32_t fileId) const {
  std::string_view file = metadata_.files().get(fileId);
  if (directory_.empty() || (!file.empty() && file.front() == '/'))
    return std::string(file);
  std::string path = directory_;
  if (path.back() != '/')
    path += '/';
  return path + std::string(file);
}

std::string CheckpointReader::describeShard(ShardId id) const {
  ShardRef shard = metadata_.shard(id);
  TensorRef tensor = metadata_.tensor(shard.tensorId());
  return "shard " + std::to_string(id - tensor.firstShard()) + " of key " +
         quoteName(tensor.key());
}

Expected<std::shared_ptr<const SafetensorsReader>>
CheckpointReader::openFile(ShardId id) const {
  uint32_t fileId = metadata_.shard(id).fileId();
  std::string path = filePath(fileId);
  // A missing file is the common case; say so in the checkpoint's terms
  // rather than as a failed open.
  struct stat status;
  if (::stat(path.c_str(), &status) != 0 && errno == ENOENT)
    return Error{storageMessage(path, "the file does not exist, but the "
                                      "checkpoint's metadata stores " +
                                          describeShard(id) + " there"),
                 "copy the missing file into " + directory_ +
                     ", or pass the directory that holds the whole "
                     "checkpoint"};
  return files_->open(fileId, path);
}

Expected<CheckpointReader::StoredTensor> CheckpointReader::findStoredTensor(
    ShardId id, std::shared_ptr<const SafetensorsReader> file) const {
  ShardRef shard = metadata_.shard(id);
  TensorRef tensor = metadata_.tensor(shard.tensorId());
  const std::string &path = file->path();
  auto fail = [&](const std::string &what) -> Error {
    return {storageMessage(path, "tensor " + quoteName(shard.name()) + " (" +
                                     describeShard(id) + "): " + what),
            kMismatchHint};
  };
  const SafetensorsTensor *entry = file->find(shard.name());
  if (!entry)
    return Error{storageMessage(path, "holds no tensor " +
                                          quoteName(shard.name()) +
                                          ", but the metadata stores " +
                                          describeShard(id) + " there"),
                 kMismatchHint};
  if (entry->dtype != tensor.dtype())
    return fail("stored as " + std::string(safetensorsDTypeName(entry->dtype)) +
                ", but the key's dtype is " +
                std::string(dtypeName(tensor.dtype())) + " (" +
                std::string(safetensorsDTypeName(tensor.dtype())) + ")");
  std::vector<int64_t> expected = storedShape(shard);
  if (entry->shape != expected) {
    std::string why =
        shard.flatRange()
            ? "its flat_range [" + std::to_string(shard.flatRange()->begin) +
                  ", " + std::to_string(shard.flatRange()->end) + ")"
            : "its local_shape";
    return fail("stored with shape " + formatExtents(entry->shape) + ", but " +
                why + " needs " + formatExtents(expected));
  }
  return StoredTensor{std::move(file), entry};
}

Expected<CheckpointReader::StoredTensor>
CheckpointReader::openShard(ShardId id) const {
  Expected<std::shared_ptr<const SafetensorsReader>> file = openFile(id);
  if (!file)
    return file.error();
  return findStoredTensor(id, std::move(*file));
}

std::vector<Error> CheckpointReader::validate(size_t maxErrors) const {
  std::vector<Error> problems;
  // A file that cannot be opened is one problem, not one per shard in it.
  std::vector<bool> badFile(metadata_.files().size(), false);
  for (ShardId id = 0; id < metadata_.shardCount(); ++id) {
    if (problems.size() >= maxErrors)
      break;
    uint32_t fileId = metadata_.shard(id).fileId();
    if (badFile[fileId])
      continue;
    Expected<std::shared_ptr<const SafetensorsReader>> file = openFile(id);
    if (!file) {
      badFile[fileId] = true;
      problems.push_back(file.error());
      continue;
    }
    Expected<StoredTensor> stored = findStoredTensor(id, std::move(*file));
    if (!stored)
      problems.push_back(stored.error());
  }
  return problems;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

Status CheckpointReader::readShardBox(const StoredTensor &stored,
                                      ShardRef shard, const Box &box,
                                      void *out) const {
  size_t elementSize = dtypeSize(stored.entry->dtype);
  Status failure;
  Status walk = forEachStoredRun(
      Box(shard.globalOffset(), shard.localShape()), shard.flatRange(), box,
      [&](const StoredRun &run) {
        failure = stored.file->readElements(
            *stored.entry, uint64_t(run.storedOffset), uint64_t(run.count),
            static_cast<std::byte *>(out) + run.regionOffset * elementSize);
        return failure.ok();
      });
  if (!walk)
    return walk;
  return failure;
}

Status CheckpointReader::readRegion(
    TensorId id, const Box &region, void *buffer, size_t bufferSize,
    llvm::function_ref<Status(const ReplicaOverlap &)> onReplica) const {
  TensorRef tensor = metadata_.tensor(id);
  size_t elementSize = dtypeSize(tensor.dtype());
  Box whole = Box::fromShape(tensor.globalShape());
  if (region.rank() != whole.rank() || !whole.contains(region))
    return Error{"key " + quoteName(tensor.key()) + ": region " +
                     region.toString() + " is not inside its global shape " +
                     formatExtents(tensor.globalShape()),
                 "ask for elements inside the key"};
  if (bufferSize != uint64_t(region.volume()) * elementSize)
    return Error{"key " + quoteName(tensor.key()) + ": a buffer of " +
                     std::to_string(bufferSize) + " bytes for region " +
                     region.toString() + ", which needs " +
                     std::to_string(uint64_t(region.volume()) * elementSize),
                 "size the buffer as the region's volume times the dtype size"};
  if (region.isEmpty())
    return Status();

  MutableTensorView target(buffer, bufferSize, tensor.dtype(), region.shape());
  std::vector<Box> missing = {region};
  std::vector<std::byte> scratch, replica;
  for (ShardRef shard : tensor.shards()) {
    if (missing.empty() && !onReplica)
      break;
    for (const Box &piece : storedBoxes(shard)) {
      std::optional<Box> common = intersect(piece, region);
      if (!common)
        continue;
      // The parts still missing, and (for replicas) those already filled.
      std::vector<Box> fresh, filled;
      for (const Box &gap : missing)
        if (std::optional<Box> part = intersect(gap, *common))
          fresh.push_back(*part);
      if (onReplica) {
        filled = {*common};
        for (const Box &gap : missing) {
          std::vector<Box> next;
          for (const Box &box : filled)
            for (Box &rest : subtract(box, gap))
              next.push_back(std::move(rest));
          filled = std::move(next);
        }
      }
      if (fresh.empty() && filled.empty())
        continue;

      Expected<StoredTensor> stored = openShard(shard.id());
      if (!stored)
        return stored.error();
      // Without replicas to check, only the missing parts are read; the
      // whole region from one shard goes straight into the buffer.
      if (!onReplica) {
        for (const Box &part : fresh) {
          if (part == region) {
            if (Status read = readShardBox(*stored, shard, region, buffer);
                !read)
              return read;
            continue;
          }
          scratch.resize(size_t(part.volume()) * elementSize);
          if (Status read = readShardBox(*stored, shard, part, scratch.data());
              !read)
            return read;
          TensorView source(scratch.data(), scratch.size(), tensor.dtype(),
                            part.shape());
          if (Status copy = copyRegion(source, Box::fromShape(part.shape()),
                                       target, part.relativeTo(region));
              !copy)
            return copy;
        }
      } else {
        // The shard's whole intersection, read once: its missing parts are
        // copied in, the rest is checked by the caller.
        scratch.resize(size_t(common->volume()) * elementSize);
        if (Status read = readShardBox(*stored, shard, *common, scratch.data());
            !read)
          return read;
        TensorView source(scratch.data(), scratch.size(), tensor.dtype(),
                          common->shape());
        for (const Box &part : fresh)
          if (Status copy = copyRegion(source, part.relativeTo(*common), target,
                                       part.relativeTo(region));
              !copy)
            return copy;
        for (const Box &part : filled) {
          const void *values = scratch.data();
          if (part != *common) {
            replica.resize(size_t(part.volume()) * elementSize);
            MutableTensorView dense(replica.data(), replica.size(),
                                    tensor.dtype(), part.shape());
            if (Status copy = copyRegion(source, part.relativeTo(*common),
                                         dense, Box::fromShape(part.shape()));
                !copy)
              return copy;
            values = replica.data();
          }
          if (Status checked =
                  onReplica(ReplicaOverlap{shard.id(), part, values});
              !checked)
            return checked;
        }
      }
      // Update the gaps: what the fresh parts filled is no longer missing.
      std::vector<Box> next;
      for (const Box &gap : missing)
        for (Box &rest : subtract(gap, *common))
          next.push_back(std::move(rest));
      missing = std::move(next);
    }
  }
  if (missing.empty())
    return Status();

  int64_t count = 0;
  for (const Box &gap : missing)
    count += gap.volume();
  std::string more;
  if (missing.size() > 1)
    more = " (and " + std::to_string(missing.size() - 1) + " more regions; " +
           std::to_string(count) + " elements in all)";
  return Error{"key " + quoteName(tensor.key()) + ": elements " +
                   missing.front().toString() +
                   " are stored in no shard of the checkpoint in " +
                   directory_ + more,
               "the metadata's shards must cover every element of every key; "
               "the checkpoint is incomplete, or its metadata is wrong"};
}

Status CheckpointReader::readStored(ShardId id, int64_t first, int64_t count,
                                    void *buffer) const {
  Expected<StoredTensor> stored = openShard(id);
  if (!stored)
    return stored.error();
  if (first < 0 || count < 0)
    return Error{"cannot read elements [" + std::to_string(first) + ", " +
                     std::to_string(first + count) + ") of " +
                     describeShard(id),
                 "ask for elements the shard stores"};
  return stored->file->readElements(*stored->entry, uint64_t(first),
                                    uint64_t(count), buffer);
}

Expected<uint64_t> CheckpointReader::hashShard(ShardId id) const {
  Expected<StoredTensor> stored = openShard(id);
  if (!stored)
    return stored.error();
  return stored->file->contentHash(*stored->entry);
}

Status CheckpointReader::verifyContentHash(ShardId id) const {
  ShardRef shard = metadata_.shard(id);
  std::string place = storageMessage(filePath(shard.fileId()),
                                     "tensor " + quoteName(shard.name()) +
                                         " (" + describeShard(id) + "): ");
  std::optional<uint64_t> recorded = shard.contentHash();
  if (!recorded)
    return Error{place + "the metadata records no xxh3 hash to verify",
                 "hashes are recorded by the tools that write checkpoints "
                 "(aoa-shard, aoa-run)"};
  Expected<uint64_t> actual = hashShard(id);
  if (!actual)
    return actual.error();
  if (*actual != *recorded)
    return Error{place + "the data's xxh3 is " + formatContentHash(*actual) +
                     ", but the metadata records " +
                     formatContentHash(*recorded),
                 "the file changed after it was written (a corrupt disk or "
                 "copy, or an edit); restore it from a good copy"};
  return Status();
}

} // namespace aoa::checkpoint
