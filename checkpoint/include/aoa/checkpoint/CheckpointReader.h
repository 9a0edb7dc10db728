//===- CheckpointReader.h - Reading a sharded checkpoint by key -*- C++ -*-===//
//
// A checkpoint is a directory of safetensors files plus shard metadata
// (docs/shard-metadata.md) saying which stored tensor holds which box (or flat range
// of a box) of which key. The reader answers questions in the keys' terms:
// "give me elements [0:64, 128:256] of key K", assembling the answer from
// whichever shards hold them, so tools can compare or re-shard checkpoints
// whatever their layouts.
//
// The caller loads the metadata (the frontend's loader, usually from
// DIR/metadata.json): the runtime does not depend on the frontend. Files are
// opened on first use (or all at once by validate()), and every use checks
// the stored tensor against the metadata: present, same dtype, and the shard's
// stored shape (its box's shape, or [end - begin] for a flat range). At most
// `maxOpenFiles` files stay open; the least recently used one is closed.
//
// The reader may be used from several threads at once.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_CHECKPOINT_CHECKPOINTREADER_H
#define AOA_CHECKPOINT_CHECKPOINTREADER_H

#include "aoa/ir/Box.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aoa::runtime {
class SafetensorsReader;
} // namespace aoa::runtime

namespace aoa::checkpoint {

using runtime::Error;
using runtime::Expected;
using runtime::SafetensorsReader;
using runtime::Status;

struct CheckpointReaderOptions {
  /// Files kept open at once (at least 1).
  size_t maxOpenFiles = 64;
};

/// Values that a shard holds where an earlier shard of the key already
/// provided them: a replica, to be checked against what was read.
struct ReplicaOverlap {
  ShardId shard = 0;
  /// The elements, in the key's coordinates.
  Box region;
  /// The shard's values there: dense, row-major, the key's dtype.
  const void *values = nullptr;
};

class CheckpointReader {
public:
  /// The checkpoint in `directory` that `metadata` describes. Opens nothing.
  CheckpointReader(std::string directory, ShardMetadata metadata,
                   CheckpointReaderOptions options = {});
  CheckpointReader(CheckpointReader &&) noexcept;
  CheckpointReader &operator=(CheckpointReader &&) noexcept;
  ~CheckpointReader();

  const std::string &directory() const { return directory_; }
  const ShardMetadata &metadata() const { return metadata_; }
  /// DIRECTORY/FILE for a file id of the metadata.
  std::string filePath(uint32_t fileId) const;

  /// Opens every file and checks every shard's stored tensor. Returns the
  /// problems found, at most `maxErrors` (a file that cannot be opened is
  /// one problem, not one per shard); empty when the checkpoint is sound.
  std::vector<Error> validate(size_t maxErrors = 20) const;

  /// Reads `region` (a box in the key's global coordinates) of `tensor` into
  /// `buffer`: dense, row-major, `bufferSize` = region volume × dtype size
  /// bytes. Each element comes from the first shard, in metadata order, that
  /// stores it. Fails, naming the key and the element range, when some
  /// element is stored by no shard, and with the file and tensor when a read
  /// fails. With `onReplica`, shards that also store elements an earlier
  /// shard provided are read there too and their values handed to it (to
  /// check that replicas agree); a failure it returns ends the read.
  Status readRegion(TensorId tensor, const Box &region, void *buffer,
                    size_t bufferSize,
                    llvm::function_ref<Status(const ReplicaOverlap &)>
                        onReplica = nullptr) const;

  /// Reads elements [first, first + count) of `shard`'s stored data (its
  /// box's row-major flattening, or its flat range) into `buffer`.
  Status readStored(ShardId shard, int64_t first, int64_t count,
                    void *buffer) const;

  /// The xxh3-64 hash (seed 0) of `shard`'s stored bytes, read in bounded
  /// pieces.
  Expected<uint64_t> hashShard(ShardId shard) const;
  /// Checks `shard`'s bytes against the hash the metadata records; fails,
  /// naming the file, tensor and key, when they differ or none is recorded.
  Status verifyContentHash(ShardId shard) const;

  /// "shard 2 of key 'k'" for messages.
  std::string describeShard(ShardId shard) const;

private:
  class FileCache;
  struct StoredTensor;
  struct RegionRead;

  /// The file that stores `shard`, opened (or found open).
  Expected<std::shared_ptr<const SafetensorsReader>>
  openFile(ShardId shard) const;
  /// `shard`'s entry in `file`, checked against the metadata.
  Expected<StoredTensor>
  findStoredTensor(ShardId shard,
                   std::shared_ptr<const SafetensorsReader> file) const;
  /// Both of the above.
  Expected<StoredTensor> openShard(ShardId shard) const;
  /// Reads `box` (inside the shard's stored elements) into `out`, dense.
  Status readShardBox(const StoredTensor &stored, ShardRef shard,
                      const Box &box, void *out) const;
  /// readRegion's steps for one stored box of `shard`: without replicas to
  /// check, only the `fresh` (still missing) parts are read; with them, the
  /// whole `common` part once, its `filled` parts handed to the check.
  Status readFreshParts(RegionRead &read, const StoredTensor &stored,
                        ShardRef shard, llvm::ArrayRef<Box> fresh) const;
  Status readReplicaParts(RegionRead &read, const StoredTensor &stored,
                          ShardRef shard, const Box &common,
                          llvm::ArrayRef<Box> fresh,
                          llvm::ArrayRef<Box> filled) const;

  std::string directory_;
  ShardMetadata metadata_;
  CheckpointReaderOptions options_;
  std::unique_ptr<FileCache> files_;
};

} // namespace aoa::checkpoint

#endif // AOA_CHECKPOINT_CHECKPOINTREADER_H
