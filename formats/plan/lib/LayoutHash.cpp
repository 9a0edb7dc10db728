//===- LayoutHash.cpp -----------------------------------------------------===//
#include "aoa/formats/plan/LayoutHash.h"

#include "ByteCoding.h"

#include <memory>
// Exposes XXH3_state_t, so the state can be allocated with make_unique.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

namespace aoa {
namespace binplan {

namespace {

void putString(ByteWriter &w, std::string_view s) {
  w.u64(s.size());
  w.raw(s);
}

void putInts(ByteWriter &w, llvm::ArrayRef<int64_t> values) {
  w.u64(values.size());
  for (int64_t v : values)
    w.i64(v);
}

} // namespace

uint64_t layoutHash(const ShardMetadata &metadata) {
  // Length-prefixed fields, so that no two layouts give the same bytes;
  // hashed in chunks, so that a million shards need no copy of the layout.
  auto state = std::make_unique<XXH3_state_t>();
  XXH3_64bits_reset(state.get());
  ByteWriter w;
  auto flush = [&] {
    XXH3_64bits_update(state.get(), w.bytes().data(), w.size());
    w = ByteWriter();
  };
  for (TensorId id : metadata.tensorIdsByKey()) {
    TensorRef tensor = metadata.tensor(id);
    putString(w, tensor.key());
    w.u8(uint8_t(tensor.dtype()));
    putInts(w, tensor.globalShape());
    w.u64(tensor.shardCount());
    for (ShardRef shard : tensor.shards()) {
      w.u32(shard.rank());
      putString(w, shard.file());
      putString(w, shard.name());
      putInts(w, shard.globalOffset());
      putInts(w, shard.localShape());
      std::optional<FlatElementRange> flat = shard.flatRange();
      w.u8(flat ? 1 : 0);
      w.i64(flat ? flat->begin : 0);
      w.i64(flat ? flat->end : 0);
      if (w.size() > (1 << 16))
        flush();
    }
  }
  flush();
  return XXH3_64bits_digest(state.get());
}

} // namespace binplan
} // namespace aoa
