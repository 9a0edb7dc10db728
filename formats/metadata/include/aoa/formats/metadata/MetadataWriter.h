//===- MetadataWriter.h - Shard metadata back to JSON -----------*- C++ -*-===//
//
// Writes a ShardMetadata in the aoa-metadata v1 format (docs/shard-metadata.md), the
// inverse of MetadataLoader: tensors in file order, one shard per line, so
// large files stay readable and diagnostics about them print short lines.
// A shard's content hash, when it has one, is its last field:
// "xxh3": "2d06800538d394c2".
//
// It lives in ir, not frontend, because the runtime writes the metadata.json
// of the checkpoints it produces.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_METADATA_METADATAWRITER_H
#define AOA_FORMATS_METADATA_METADATAWRITER_H

#include "aoa/ir/ShardMetadata.h"

#include <iosfwd>
#include <string>

namespace aoa {

/// Streams the metadata as JSON; check the stream's state for I/O errors.
void writeShardMetadata(const ShardMetadata &metadata, std::ostream &os);

/// The metadata as one JSON text (for tests and small files).
std::string printShardMetadata(const ShardMetadata &metadata);

} // namespace aoa

#endif // AOA_FORMATS_METADATA_METADATAWRITER_H
