//===- MetadataArgument.h - A --src / --dst argument ------------*- C++ -*-===//
//
// Tools take a checkpoint's shard metadata as a metadata file (aoa-metadata
// v1) or as the checkpoint's directory: aoa's output (its metadata.json), a
// Hugging Face directory, or a directory of *.safetensors files, whose
// headers are then scanned (formats/CheckpointDirectory.h).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_METADATAARGUMENT_H
#define AOA_DRIVER_METADATAARGUMENT_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/ShardMetadata.h"

#include <optional>
#include <string>
#include <vector>

namespace aoa {

/// Loads `path` (a metadata file or a checkpoint directory); errors are
/// reported through `diags`. `locatePath` is set to the file whose text
/// names the keys (empty when there is none); `otherFiles`, when given, to
/// a directory's other files (config.json, tokenizer files, ...). `threads`
/// > 1 lets a metadata file's keys be sorted on two.
std::optional<ShardMetadata>
loadMetadataArgument(const std::string &path, SourceManager &sources,
                     DiagnosticEngine &diags, std::string &locatePath,
                     std::vector<std::string> *otherFiles = nullptr,
                     unsigned threads = 1);

} // namespace aoa

#endif // AOA_DRIVER_METADATAARGUMENT_H
