//===- SafetensorsIndexWriter.cpp - An index as transformers writes it ----===//
#include "aoa/formats/SafetensorsIndex.h"

#include "Text.h"
#include "aoa/ir/HuggingFaceIndex.h"

#include <algorithm>
#include <cstdio>

namespace aoa::formats {

using runtime::Error;
using runtime::Expected;

Expected<std::string> formatSafetensorsIndex(const ShardMetadata &layout) {
  uint64_t totalSize = 0;
  for (TensorRef tensor : layout.tensors()) {
    auto fail = [&](const std::string &what) {
      return Error{"tensor " + quote(tensor.key()) + ": " + what,
                   "a Hugging Face directory stores every tensor whole, "
                   "once, under its own name (packHuggingFaceShards makes "
                   "such a layout)"};
    };
    if (tensor.shardCount() != 1)
      return fail("has " + std::to_string(tensor.shardCount()) +
                  " shards, not one");
    ShardRef shard = tensor.shards()[0];
    if (shard.flatRange() || shard.localShape() != tensor.globalShape() ||
        std::any_of(shard.globalOffset().begin(), shard.globalOffset().end(),
                    [](int64_t x) { return x != 0; }))
      return fail("its shard is not the whole tensor");
    if (shard.name() != tensor.key())
      return fail("is stored under another name, " + quote(shard.name()));
    std::optional<int64_t> count = elementCount(tensor.globalShape());
    if (!count)
      return fail("its shape " + formatShape(tensor.globalShape()) +
                  " has no element count");
    uint64_t bytes = uint64_t(*count) * dtypeSize(tensor.dtype());
    if (dtypeSize(tensor.dtype()) != 0 &&
        bytes / dtypeSize(tensor.dtype()) != uint64_t(*count))
      return fail("its byte size overflows");
    totalSize += bytes;
  }

  std::vector<std::pair<std::string, std::string>> weightMap;
  weightMap.reserve(layout.tensorCount());
  for (TensorId id : layout.tensorIdsByKey()) {
    TensorRef tensor = layout.tensor(id);
    weightMap.emplace_back(std::string(tensor.key()),
                           std::string(tensor.shards()[0].file()));
  }
  return formatHuggingFaceIndex(std::move(weightMap), totalSize);
}

} // namespace aoa::formats
