//===- ShardGeometry.h - What a shard stores, as boxes ----------*- C++ -*-===//
//
// A shard stores a box of its key, or a flat range of that box
// (docs/shard-metadata.md); readers and writers of checkpoints walk the
// stored elements as boxes in storage order.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_SHARDGEOMETRY_H
#define AOA_IR_SHARDGEOMETRY_H

#include "aoa/ir/Box.h"
#include "aoa/ir/FlatRange.h"
#include "aoa/ir/ShardMetadata.h"

#include <cstdint>
#include <vector>

namespace aoa {

/// The elements `shard` stores, as boxes in the key's coordinates, in
/// storage order (each box's own row-major order continues where the
/// previous box ended): its box, or the boxes of its flat range.
inline std::vector<Box> storedBoxes(ShardRef shard) {
  Box box(shard.globalOffset(), shard.localShape());
  std::optional<FlatElementRange> flat = shard.flatRange();
  if (!flat)
    return {box};
  std::vector<Box> boxes;
  for (FlatPiece &piece : flatRangeToBoxes(box, flat->begin, flat->end))
    boxes.push_back(std::move(piece.box));
  return boxes;
}

/// The shape of the stored tensor: the box's shape, or [end - begin].
inline std::vector<int64_t> storedShape(ShardRef shard) {
  if (std::optional<FlatElementRange> flat = shard.flatRange())
    return {flat->size()};
  return shard.localShape().vec();
}

} // namespace aoa

#endif // AOA_IR_SHARDGEOMETRY_H
