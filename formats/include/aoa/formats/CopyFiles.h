//===- CopyFiles.h - Copying a checkpoint's non-tensor files ----*- C++ -*-===//
//
// A Hugging Face export carries the source directory's other files
// (config.json, generation_config.json, tokenizer files, ...: the otherFiles
// of CheckpointDirectory.h) over unchanged. Each is copied byte for byte,
// through symbolic links (a Hub cache snapshot links into ../../blobs), to a
// temporary name in the destination, flushed, and renamed into place, so a
// file appears whole or not at all.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_COPYFILES_H
#define AOA_FORMATS_COPYFILES_H

#include "aoa/runtime/Error.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace aoa::formats {

/// Copies the files `names` (plain file names, no '/') from `fromDirectory`
/// into `toDirectory`, which must exist. Without `overwrite`, fails before
/// copying anything when one of them exists there. On a failure the files
/// this call created are removed again.
runtime::Status copyFilesAtomically(const std::string &fromDirectory,
                                    llvm::ArrayRef<std::string> names,
                                    const std::string &toDirectory,
                                    bool overwrite = false);

} // namespace aoa::formats

#endif // AOA_FORMATS_COPYFILES_H
