//===- MetadataLoader.h - Reading shard metadata JSON -----------*- C++ -*-===//
//
// Loads an aoa-metadata v1 file (docs/shard-metadata.md), a source checkpoint's shard
// metadata or a destination layout, into a ShardMetadata:
//
//   {"format": "aoa-metadata", "version": 1, "tensors": {KEY: {
//      "dtype": "bfloat16", "global_shape": [1024, 512],
//      "shards": [{"rank": 0, "file": "rank00000.safetensors", "name": KEY,
//                  "global_offset": [0, 0], "local_shape": [256, 512],
//                  "flat_range": [a, b], "xxh3": "2d06800538d394c2"}]}}}
//
// flat_range and xxh3 (the stored bytes' xxh3-64 hash, written by tools that
// produce checkpoints) are optional.
//
// The file is parsed with simdjson's On-Demand API straight into the compact
// model (no DOM), so a 200 MB file loads in a fraction of a second. Every
// problem is a located diagnostic with a hint: malformed JSON, wrong format
// or version, unknown or duplicate fields, wrong value types, unknown dtypes,
// dimension mismatches, negative extents, shards outside the global shape,
// bad flat ranges, hashes that are not 16 hex digits, keys given twice,
// missing fields. Loading continues past an error where it can and stops
// after 20 errors.
//
// The file's text is registered with the SourceManager only when a diagnostic
// needs a location, so a clean load does not hold the text twice.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_METADATA_METADATALOADER_H
#define AOA_FORMATS_METADATA_METADATALOADER_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/ShardMetadata.h"

#include <optional>
#include <string>
#include <string_view>

namespace aoa {

/// Reads and validates the metadata file at `path`; on any error reports it
/// and returns nullopt. `threads` > 1 lets the keys be sorted on two.
std::optional<ShardMetadata> loadShardMetadata(const std::string &path,
                                               SourceManager &sources,
                                               DiagnosticEngine &diags,
                                               unsigned threads = 1);

/// As loadShardMetadata, for text already in memory; `path` names it in
/// diagnostics.
std::optional<ShardMetadata> loadShardMetadataText(const std::string &path,
                                                   std::string_view text,
                                                   SourceManager &sources,
                                                   DiagnosticEngine &diags);

} // namespace aoa

#endif // AOA_FORMATS_METADATA_METADATALOADER_H
