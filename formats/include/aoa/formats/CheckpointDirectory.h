//===- CheckpointDirectory.h - A checkpoint directory, any kind -*- C++ -*-===//
//
// The tools accept a checkpoint directory wherever they accept shard
// metadata. A directory is one of these kinds, found in this order:
//
//   1. aoa's own output: metadata.json (aoa-metadata v1) names the files;
//   2. a Hugging Face sharded directory: model.safetensors.index.json, whose
//      weight_map names the file of every tensor;
//   3. a Hugging Face single file: model.safetensors;
//   4. a plain directory of *.safetensors files (all of them, sorted).
//
// Kinds 2-4 are scanned (DirectoryScan.h): only the headers are read, every
// one is validated, and each tensor becomes one whole shard (rank 0, its
// file, in-file name = key). The directory's other regular files
// (config.json, tokenizer files, ...) are listed for an export to copy.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_CHECKPOINTDIRECTORY_H
#define AOA_FORMATS_CHECKPOINTDIRECTORY_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aoa::formats {

using runtime::Error;
using runtime::Expected;
using runtime::Status;

enum class CheckpointKind {
  /// metadata.json (aoa-shard, aoa-run).
  AoaMetadata,
  /// model.safetensors.index.json and the files it names.
  HuggingFaceIndex,
  /// model.safetensors.
  HuggingFaceSingleFile,
  /// Every *.safetensors file of the directory.
  SafetensorsFiles,
};

/// "aoa-metadata", "huggingface-sharded", "huggingface-single-file",
/// "safetensors-files".
std::string_view checkpointKindName(CheckpointKind kind);

/// The names that decide a directory's kind.
inline constexpr const char *kAoaMetadataFile = "metadata.json";
inline constexpr const char *kHuggingFaceIndexFile =
    "model.safetensors.index.json";
inline constexpr const char *kHuggingFaceSingleFile = "model.safetensors";

struct CheckpointDirectory {
  /// As given.
  std::string directory;
  CheckpointKind kind = CheckpointKind::SafetensorsFiles;
  /// Where every tensor is stored. Scanned: one whole shard per tensor
  /// (rank 0, its file, in-file name = key), tensors in key (byte) order.
  ShardMetadata metadata;
  /// metadata.json or model.safetensors.index.json; empty for the others.
  std::string descriptionFile;
  /// The files that hold the tensors, relative to the directory, sorted.
  std::vector<std::string> tensorFiles;
  /// The directory's other regular files (config.json,
  /// generation_config.json, tokenizer files, ...), sorted: what an export
  /// copies unchanged. Hidden files, subdirectories and weights are not in
  /// it.
  std::vector<std::string> otherFiles;
  /// Weight files the checkpoint does not use (other *.safetensors or
  /// *.index.json files, pytorch_model*.bin, *.pt, *.gguf, ...), sorted:
  /// neither read nor copied.
  std::vector<std::string> ignoredFiles;
  /// Bytes of tensor data: the sum of the stored tensors' sizes.
  uint64_t tensorBytes = 0;
};

struct OpenCheckpointOptions {
  /// With metadata.json: open every file it names and check every stored
  /// tensor against it (headers only). Scanned directories are always
  /// checked.
  bool checkFiles = true;
};

/// Opens `directory` as the tools do: its metadata.json when it has one
/// (loaded by the frontend's loader, whose located diagnostics go to `diags`;
/// the returned Error then says that metadata.json has errors), otherwise
/// its scan (scanSafetensorsDirectory, DirectoryScan.h).
Expected<CheckpointDirectory>
openCheckpointDirectory(const std::string &directory, SourceManager &sources,
                        DiagnosticEngine &diags,
                        const OpenCheckpointOptions &options = {});

} // namespace aoa::formats

#endif // AOA_FORMATS_CHECKPOINTDIRECTORY_H
