//===- LayoutHash.h - A canonical hash of a checkpoint layout ---*- C++ -*-===//
//
// The hash a binary plan's header records for the source and destination
// layouts it was compiled from: of the metadata's content, not of its JSON
// text (whitespace, member order and recorded content hashes do not count).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LAYOUTHASH_H
#define AOA_FORMATS_PLAN_LAYOUTHASH_H

#include "aoa/ir/ShardMetadata.h"

#include <cstdint>

namespace aoa {
namespace binplan {

/// xxh3-64 over every key in key order (its name, dtype and global shape)
/// and its shards in order (rank, file, name, offset, shape, flat range).
uint64_t layoutHash(const ShardMetadata &metadata);

} // namespace binplan
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LAYOUTHASH_H
