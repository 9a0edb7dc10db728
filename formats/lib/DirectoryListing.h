//===- DirectoryListing.h - What a checkpoint directory holds ---*- C++ -*-===//
//
// Private to the formats library: the names in a directory (hidden names
// left out), whether each is a regular file once symbolic links are
// followed, and which of the files that hold no tensors an export copies.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_LIB_DIRECTORYLISTING_H
#define AOA_FORMATS_LIB_DIRECTORYLISTING_H

#include "aoa/formats/CheckpointDirectory.h"

#include <string>
#include <string_view>
#include <vector>

namespace aoa::formats {

struct DirectoryEntry {
  std::string name;
  /// A regular file, or a symbolic link to one.
  bool regularFile = false;
  /// A symbolic link whose target does not exist.
  bool brokenLink = false;
};

/// The entries of `directory`, sorted by name, without names starting with
/// '.' (temporaries, .cache, .git...). Fails when it is not a readable
/// directory.
Expected<std::vector<DirectoryEntry>>
listDirectory(const std::string &directory);

/// The entry called `name`, or null.
const DirectoryEntry *findEntry(const std::vector<DirectoryEntry> &entries,
                                std::string_view name);

/// Weights in some format (*.safetensors, *.index.json, pytorch_model*.bin,
/// *.pt, *.pth, *.ckpt, *.h5, *.msgpack, *.gguf, *.pdparams, *.pdopt).
bool isWeightFileName(std::string_view name);

/// Fills checkpoint.otherFiles and checkpoint.ignoredFiles from `entries`:
/// regular files (and broken links, so that copying them fails loudly)
/// that are neither tensorFiles nor the descriptionFile; weights go to
/// ignoredFiles. Subdirectories are left out.
void classifyOtherFiles(CheckpointDirectory &checkpoint,
                        const std::vector<DirectoryEntry> &entries);

} // namespace aoa::formats

#endif // AOA_FORMATS_LIB_DIRECTORYLISTING_H
