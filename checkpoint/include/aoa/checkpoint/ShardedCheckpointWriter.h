//===- ShardedCheckpointWriter.h - A checkpoint in a layout ----*- C++ -*-===//
//
// Writes a checkpoint whose shards are those of a layout (shard metadata,
// e.g. from aoa-layout) with data from a TensorSupplier: one safetensors file
// per file of the layout, holding its shards (stored shape: the box's shape,
// or [end - begin] for a flat range), then DIR/metadata.json: the layout with
// the xxh3-64 of every shard's bytes. This is what aoa-shard does, and how
// tests and benchmarks make source checkpoints of known contents.
//
// Everything that can be checked is checked before the first byte is
// written: every key against the supplier (dtype, global shape), the
// layout's geometry, no two shards of one file under one name, file names
// that stay inside DIR, and (unless overwriting) no file already there.
// Each file appears atomically (SafetensorsWriter: temporary, fsync,
// rename); metadata.json is written last, also atomically, so a directory
// with a metadata.json holds a complete checkpoint. If writing fails, the
// files this call committed are removed again.
//
// Data moves a bounded slab at a time (RowMajorChunks.h), so memory stays
// near `chunkBytes` however large the tensors are.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_CHECKPOINT_SHARDEDCHECKPOINTWRITER_H
#define AOA_CHECKPOINT_SHARDEDCHECKPOINTWRITER_H

#include "aoa/checkpoint/TensorSupplier.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace aoa::checkpoint {

using runtime::Error;
using runtime::Expected;
using runtime::Status;

struct ShardedCheckpointWriterOptions {
  /// Replace files and a metadata.json that already exist in the directory;
  /// otherwise any of them existing is an error.
  bool overwrite = false;
  /// Bytes of data held in memory at a time (at least one element).
  size_t chunkBytes = size_t(64) << 20;
};

/// What was written.
struct WrittenCheckpoint {
  /// The layout with every shard's content hash, as in metadata.json.
  ShardMetadata metadata;
  size_t fileCount = 0;
  /// Tensor data bytes in all files (headers not counted).
  uint64_t dataBytes = 0;
};

/// Writes the checkpoint `layout` describes into `directory` (created when
/// missing) with data from `supplier`.
Expected<WrittenCheckpoint>
writeShardedCheckpoint(const ShardMetadata &layout,
                       const TensorSupplier &supplier,
                       const std::string &directory,
                       const ShardedCheckpointWriterOptions &options = {});

} // namespace aoa::checkpoint

#endif // AOA_CHECKPOINT_SHARDEDCHECKPOINTWRITER_H
