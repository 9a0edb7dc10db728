//===- HuggingFaceShards.h - Tensors packed into HF shard files -*- C++ -*-===//
//
// A Hugging Face export writes its tensors, whole, into files filled in the
// order given, each up to a maximum size (huggingface_hub's
// split_state_dict_into_shards):
//
//   - a tensor goes into the current file unless that would make the file
//     larger than the limit; then the next file starts with it (a file ends
//     exactly at the limit when the tensors fit);
//   - a tensor larger than the limit gets a file of its own;
//   - files are named model-0000K-of-0000N.safetensors (K from 1), or
//     model.safetensors when there is only one.
//
// One difference, on purpose: huggingface_hub gives an oversized tensor its
// file ahead of the file being filled, so its files are not in key order;
// here the file being filled is closed first, so every file holds a run of
// consecutive tensors and the files are in the given order.
//
// The result is a destination layout (ShardMetadata) that aoa-compile takes
// with --dst: each tensor one whole shard under its own name; file i is
// written by rank i % ranks.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_HUGGINGFACESHARDS_H
#define AOA_FORMATS_HUGGINGFACESHARDS_H

#include "aoa/formats/ShardSize.h"
#include "aoa/ir/DType.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aoa::formats {

/// One tensor to export, whole.
struct ExportTensor {
  std::string key;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

struct HuggingFaceShardOptions {
  /// Bytes of tensor data per file (parseShardSize); default 5GB.
  uint64_t maxShardSize = kDefaultMaxShardSize;
  /// Ranks that write the files: file i is written by rank i % ranks.
  uint32_t ranks = 1;
};

struct HuggingFaceShards {
  /// Each tensor one whole shard (in-file name = key) in its file, tensors
  /// in the order given.
  ShardMetadata layout;
  /// The file names in order, and the tensor bytes each holds.
  std::vector<std::string> files;
  std::vector<uint64_t> fileBytes;
  /// The sum of every tensor's bytes (the index's metadata.total_size).
  uint64_t totalSize = 0;

  /// Hugging Face writes model.safetensors.index.json (SafetensorsIndex.h)
  /// only when there is more than one file.
  bool needsIndex() const { return files.size() > 1; }
};

/// Packs `tensors`, in this order, into files (see the file comment).
/// Fails on a key given twice, a negative extent, a byte size that
/// overflows, more than 255 dimensions, or ranks = 0.
runtime::Expected<HuggingFaceShards>
packHuggingFaceShards(llvm::ArrayRef<ExportTensor> tensors,
                      const HuggingFaceShardOptions &options = {});

/// The same for the keys of `keys` (dtype and global shape of each; its
/// shards do not matter), in key (byte) order, as Hugging Face indexes list
/// them.
runtime::Expected<HuggingFaceShards>
packHuggingFaceShards(const ShardMetadata &keys,
                      const HuggingFaceShardOptions &options = {});

/// "model-00002-of-00005.safetensors" for index 1 of 5 (counted from 0);
/// "model.safetensors" when count is 1.
std::string huggingFaceShardFileName(size_t index, size_t count);

} // namespace aoa::formats

#endif // AOA_FORMATS_HUGGINGFACESHARDS_H
