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

/// The parts of `boxes` inside `within`.
std::vector<Box> intersectAll(llvm::ArrayRef<Box> boxes, const Box &within) {
  std::vector<Box> parts;
  for (const Box &box : boxes)
    if (std::optional<Box> part = intersect(box, within))
      parts.push_back(*part);
  return parts;
}

/// `boxes` less every box of `holes`.
std::vector<Box> subtractAll(std::vector<Box> boxes, llvm::ArrayRef<Box> holes) {
  for (const Box &hole : holes) {
    std::vector<Box> next;
    for (const Box &box : boxes)
      for (Box &rest : subtract(box, hole))
        next.push_back(std::move(rest));
    boxes = std::move(next);
  }
  return boxes;
}

/// A request of readRegion that cannot be answered: a region outside the
/// key or a buffer of the wrong size.
Status checkRegionRequest(TensorRef tensor, const Box &region,
                          size_t bufferSize) {
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
  return Status();
}

Error elementsStoredNowhere(TensorRef tensor, llvm::ArrayRef<Box> missing,
                            const std::string &directory) {
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
                   directory + more,
               "the metadata's shards must cover every element of every key; "
               "the checkpoint is incomplete, or its metadata is wrong"};
}

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

/// One readRegion call: the key, the region, the caller's buffer and the
/// scratch space its steps share.
struct CheckpointReader::RegionRead {
  TensorRef tensor;
  const Box &region;
  void *buffer;
  MutableTensorView target;
  llvm::function_ref<Status(const ReplicaOverlap &)> onReplica;
  std::vector<std::byte> scratch, replica;

  size_t bytesOf(const Box &box) const {
    return size_t(box.volume()) * dtypeSize(tensor.dtype());
  }
};

Status CheckpointReader::readFreshParts(RegionRead &read,
                                        const StoredTensor &stored,
                                        ShardRef shard,
                                        llvm::ArrayRef<Box> fresh) const {
  for (const Box &part : fresh) {
    // The whole region from one shard goes straight into the buffer.
    if (part == read.region) {
      if (Status status = readShardBox(stored, shard, part, read.buffer);
          !status)
        return status;
      continue;
    }
    read.scratch.resize(read.bytesOf(part));
    if (Status status = readShardBox(stored, shard, part, read.scratch.data());
        !status)
      return status;
    TensorView source(read.scratch.data(), read.scratch.size(),
                      read.tensor.dtype(), part.shape());
    if (Status copy = copyRegion(source, Box::fromShape(part.shape()),
                                 read.target, part.relativeTo(read.region));
        !copy)
      return copy;
  }
  return Status();
}

Status CheckpointReader::readReplicaParts(RegionRead &read,
                                          const StoredTensor &stored,
                                          ShardRef shard, const Box &common,
                                          llvm::ArrayRef<Box> fresh,
                                          llvm::ArrayRef<Box> filled) const {
  // The shard's whole intersection, read once: its missing parts are copied
  // in, the rest is checked by the caller.
  read.scratch.resize(read.bytesOf(common));
  if (Status status = readShardBox(stored, shard, common, read.scratch.data());
      !status)
    return status;
  TensorView source(read.scratch.data(), read.scratch.size(),
                    read.tensor.dtype(), common.shape());
  for (const Box &part : fresh)
    if (Status copy = copyRegion(source, part.relativeTo(common), read.target,
                                 part.relativeTo(read.region));
        !copy)
      return copy;
  for (const Box &part : filled) {
    const void *values = read.scratch.data();
    if (part != common) {
      read.replica.resize(read.bytesOf(part));
      MutableTensorView dense(read.replica.data(), read.replica.size(),
                              read.tensor.dtype(), part.shape());
      if (Status copy = copyRegion(source, part.relativeTo(common), dense,
                                   Box::fromShape(part.shape()));
          !copy)
        return copy;
      values = read.replica.data();
    }
    if (Status checked = read.onReplica(ReplicaOverlap{shard.id(), part, values});
        !checked)
      return checked;
  }
  return Status();
}

Status CheckpointReader::readRegion(
    TensorId id, const Box &region, void *buffer, size_t bufferSize,
    llvm::function_ref<Status(const ReplicaOverlap &)> onReplica) const {
  TensorRef tensor = metadata_.tensor(id);
  if (Status request = checkRegionRequest(tensor, region, bufferSize); !request)
    return request;
  if (region.isEmpty())
    return Status();

  RegionRead read{tensor, region, buffer,
                  MutableTensorView(buffer, bufferSize, tensor.dtype(),
                                    region.shape()),
                  onReplica, {}, {}};
  std::vector<Box> missing = {region};
  for (ShardRef shard : tensor.shards()) {
    if (missing.empty() && !onReplica)
      break;
    for (const Box &piece : storedBoxes(shard)) {
      std::optional<Box> common = intersect(piece, region);
      if (!common)
        continue;
      // The parts still missing, and (for replicas) those already filled.
      std::vector<Box> fresh = intersectAll(missing, *common);
      std::vector<Box> filled;
      if (onReplica)
        filled = subtractAll({*common}, missing);
      if (fresh.empty() && filled.empty())
        continue;
      Expected<StoredTensor> stored = openShard(shard.id());
      if (!stored)
        return stored.error();
      if (Status status =
              onReplica ? readReplicaParts(read, *stored, shard, *common,
                                           fresh, filled)
                        : readFreshParts(read, *stored, shard, fresh);
          !status)
        return status;
      // What the fresh parts filled is no longer missing.
      missing = subtractAll(std::move(missing), {*common});
    }
  }
  if (missing.empty())
    return Status();
  return elementsStoredNowhere(tensor, missing, directory_);
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
