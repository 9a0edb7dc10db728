//===- CheckpointDirectory.cpp - Opening a checkpoint directory -----------===//
#include "aoa/formats/CheckpointDirectory.h"

#include "DirectoryListing.h"
#include "Text.h"

#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/formats/DirectoryScan.h"
#include "aoa/formats/metadata/MetadataLoader.h"

#include <algorithm>

namespace aoa::formats {

std::string_view checkpointKindName(CheckpointKind kind) {
  switch (kind) {
  case CheckpointKind::AoaMetadata:
    return "aoa-metadata";
  case CheckpointKind::HuggingFaceIndex:
    return "huggingface-sharded";
  case CheckpointKind::HuggingFaceSingleFile:
    return "huggingface-single-file";
  case CheckpointKind::SafetensorsFiles:
    return "safetensors-files";
  }
  return "unknown";
}

Expected<CheckpointDirectory>
openCheckpointDirectory(const std::string &directory, SourceManager &sources,
                        DiagnosticEngine &diags,
                        const OpenCheckpointOptions &options) {
  Expected<std::vector<DirectoryEntry>> entries = listDirectory(directory);
  if (!entries)
    return entries.error();
  const DirectoryEntry *metadataEntry = findEntry(*entries, kAoaMetadataFile);
  if (!metadataEntry ||
      (!metadataEntry->regularFile && !metadataEntry->brokenLink))
    return scanSafetensorsDirectory(directory);

  std::string metadataPath = joinPath(directory, kAoaMetadataFile);
  std::optional<ShardMetadata> metadata =
      loadShardMetadata(metadataPath, sources, diags);
  if (!metadata)
    return Error{metadataPath + ": the checkpoint's metadata has errors",
                 "fix metadata.json, or remove it to have the directory's "
                 "safetensors files scanned instead"};
  CheckpointDirectory result;
  result.directory = directory;
  result.kind = CheckpointKind::AoaMetadata;
  result.descriptionFile = kAoaMetadataFile;
  for (uint32_t file = 0; file < metadata->files().size(); ++file)
    result.tensorFiles.push_back(std::string(metadata->files().get(file)));
  std::sort(result.tensorFiles.begin(), result.tensorFiles.end());
  for (ShardRef shard : IdRange<ShardRef>(
           &*metadata, 0, static_cast<uint32_t>(metadata->shardCount())))
    result.tensorBytes += uint64_t(shard.storedElementCount()) *
                          dtypeSize(metadata->tensor(shard.tensorId()).dtype());
  if (options.checkFiles) {
    checkpoint::CheckpointReader reader(directory, metadata->clone());
    std::vector<Error> problems = reader.validate(1);
    if (!problems.empty())
      return problems.front();
  }
  result.metadata = std::move(*metadata);
  classifyOtherFiles(result, *entries);
  return result;
}

} // namespace aoa::formats
