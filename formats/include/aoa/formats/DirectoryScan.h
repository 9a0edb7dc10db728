//===- DirectoryScan.h - Shard metadata from headers ------------*- C++ -*-===//
//
// Scans a Hugging Face or plain safetensors directory into a
// CheckpointDirectory (CheckpointDirectory.h): model.safetensors.index.json
// and the files its weight_map names (never a glob: a directory may hold
// other *.safetensors, e.g. consolidated copies), else model.safetensors,
// else every *.safetensors file. Only headers are read, each one validated
// by the runtime's SafetensorsReader (size, offsets inside the file, no
// overlaps, dtype x shape = bytes). Files may be symbolic links (a Hub cache
// snapshot links to ../../blobs/HASH).
//
// The index must agree with the files; each disagreement is an error naming
// the key and the files:
//   - a key the index puts in a file that does not hold it (and the file
//     that does, if another one does);
//   - a key a file holds that the index does not list;
//   - a key held by two files;
//   - a file the index names that does not exist.
// metadata.total_size is informative (publishers differ in what they sum)
// and is not checked; unknown top-level fields are ignored.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_DIRECTORYSCAN_H
#define AOA_FORMATS_DIRECTORYSCAN_H

#include "aoa/formats/CheckpointDirectory.h"

#include <string>

namespace aoa::formats {

/// Scans `directory` (kinds 2-4 of CheckpointDirectory.h; a metadata.json is
/// not read, only listed among otherFiles). The first problem found is the
/// error.
Expected<CheckpointDirectory>
scanSafetensorsDirectory(const std::string &directory);

} // namespace aoa::formats

#endif // AOA_FORMATS_DIRECTORYSCAN_H
