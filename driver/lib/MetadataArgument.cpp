//===- MetadataArgument.cpp -----------------------------------------------===//
#include "aoa/driver/MetadataArgument.h"

#include "aoa/formats/CheckpointDirectory.h"
#include "aoa/formats/metadata/MetadataLoader.h"

#include <filesystem>

namespace aoa {

std::optional<ShardMetadata>
loadMetadataArgument(const std::string &path, SourceManager &sources,
                     DiagnosticEngine &diags, std::string &locatePath,
                     std::vector<std::string> *otherFiles, unsigned threads) {
  std::error_code ignored;
  if (!std::filesystem::is_directory(path, ignored)) {
    locatePath = path;
    return loadShardMetadata(path, sources, diags, threads);
  }
  unsigned errorsBefore = diags.errorCount();
  runtime::Expected<formats::CheckpointDirectory> checkpoint =
      formats::openCheckpointDirectory(path, sources, diags);
  if (!checkpoint) {
    // metadata.json's own diagnostics say it all.
    if (diags.errorCount() == errorsBefore)
      diags.error(SourceLocation{}, checkpoint.error().message)
          .hint(checkpoint.error().hint);
    return std::nullopt;
  }
  if (!checkpoint->descriptionFile.empty())
    locatePath =
        (std::filesystem::path(path) / checkpoint->descriptionFile).string();
  if (otherFiles)
    *otherFiles = std::move(checkpoint->otherFiles);
  return std::move(checkpoint->metadata);
}

} // namespace aoa
