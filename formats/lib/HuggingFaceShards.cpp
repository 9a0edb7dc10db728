//===- HuggingFaceShards.cpp ----------------------------------------------===//
#include "aoa/formats/HuggingFaceShards.h"

#include "Text.h"

#include "llvm/ADT/StringSet.h"

#include <cstdio>

namespace aoa::formats {

using runtime::Error;
using runtime::Expected;

std::string huggingFaceShardFileName(size_t index, size_t count) {
  if (count == 1)
    return "model.safetensors";
  char name[64];
  std::snprintf(name, sizeof(name), "model-%05zu-of-%05zu.safetensors",
                index + 1, count);
  return name;
}

Expected<HuggingFaceShards>
packHuggingFaceShards(llvm::ArrayRef<ExportTensor> tensors,
                      const HuggingFaceShardOptions &options) {
  if (options.ranks == 0)
    return Error{"cannot write Hugging Face files with 0 ranks",
                 "give at least one rank"};
  // Byte sizes first, and the file of every tensor.
  std::vector<uint32_t> fileOf(tensors.size());
  std::vector<uint64_t> fileBytes;
  uint64_t totalSize = 0;
  llvm::StringSet<> keys;
  bool fileOpen = false; // the last file takes more tensors
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ExportTensor &tensor = tensors[i];
    auto fail = [&](const std::string &what, const std::string &hint) {
      return Error{"tensor " + quote(tensor.key) + ": " + what, hint};
    };
    if (!keys.insert(tensor.key).second)
      return fail("given twice", "export every tensor once");
    if (tensor.shape.size() > 255)
      return fail("has " + std::to_string(tensor.shape.size()) +
                      " dimensions, more than 255",
                  "safetensors tensors have at most 255 dimensions here");
    std::optional<int64_t> count = elementCount(tensor.shape);
    uint64_t elementSize = dtypeSize(tensor.dtype);
    if (!count)
      return fail("shape " + formatShape(tensor.shape) +
                      " has a negative extent or too many elements",
                  "give extents >= 0 whose product fits in 64 bits");
    uint64_t bytes = uint64_t(*count) * elementSize;
    if (elementSize != 0 && bytes / elementSize != uint64_t(*count))
      return fail("shape " + formatShape(tensor.shape) +
                      " holds more than "
                      "2^64 bytes",
                  "give extents whose byte size fits in 64 bits");
    if (totalSize + bytes < totalSize)
      return fail("the tensors hold more than 2^64 bytes together",
                  "export fewer tensors at once");
    totalSize += bytes;
    if (bytes > options.maxShardSize) {
      // A file of its own, after the file being filled.
      fileBytes.push_back(bytes);
      fileOpen = false;
    } else if (!fileOpen || fileBytes.back() + bytes > options.maxShardSize) {
      fileBytes.push_back(bytes);
      fileOpen = true;
    } else {
      fileBytes.back() += bytes;
    }
    fileOf[i] = uint32_t(fileBytes.size() - 1);
  }

  HuggingFaceShards shards;
  shards.totalSize = totalSize;
  shards.fileBytes = std::move(fileBytes);
  for (size_t k = 0; k < shards.fileBytes.size(); ++k)
    shards.files.push_back(
        huggingFaceShardFileName(k, shards.fileBytes.size()));

  ShardMetadataBuilder builder;
  size_t coordinates = 0;
  for (const ExportTensor &tensor : tensors)
    coordinates += 2 * tensor.shape.size();
  builder.reserve(tensors.size(), tensors.size(), coordinates);
  std::vector<uint32_t> fileIds;
  for (const std::string &file : shards.files)
    fileIds.push_back(builder.internFile(file));
  std::vector<int64_t> zeros;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ExportTensor &tensor = tensors[i];
    std::optional<TensorId> id =
        builder.addTensor(tensor.key, tensor.dtype, tensor.shape);
    if (!id)
      return Error{"tensor " + quote(tensor.key) +
                       ": cannot be added to "
                       "the layout",
                   ""};
    zeros.assign(tensor.shape.size(), 0);
    uint32_t file = fileOf[i];
    if (!builder.addShard(file % options.ranks, fileIds[file],
                          builder.keyNameId(*id), zeros, tensor.shape))
      return Error{"tensor " + quote(tensor.key) +
                       ": cannot be added to "
                       "the layout",
                   ""};
  }
  shards.layout = builder.finish();
  return shards;
}

Expected<HuggingFaceShards>
packHuggingFaceShards(const ShardMetadata &keys,
                      const HuggingFaceShardOptions &options) {
  std::vector<ExportTensor> tensors;
  tensors.reserve(keys.tensorCount());
  for (TensorId id : keys.tensorIdsByKey()) {
    TensorRef tensor = keys.tensor(id);
    tensors.push_back(
        ExportTensor{std::string(tensor.key()), tensor.dtype(),
                     std::vector<int64_t>(tensor.globalShape().begin(),
                                          tensor.globalShape().end())});
  }
  return packHuggingFaceShards(tensors, options);
}

} // namespace aoa::formats
