//===- AtomicFile.h - Small files that appear whole or not at all -*- C++ -*-===//
//
// metadata.json and the run journal's companions must never be seen half
// written: they are written to a temporary name in the same directory,
// flushed, renamed over the final name, and the directory is synced.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_ATOMICFILE_H
#define AOA_RUNTIME_STORAGE_ATOMICFILE_H

#include "aoa/runtime/support/Error.h"

#include <string>
#include <string_view>

namespace aoa::runtime {

/// Where an atomic write puts its file and its temporary.
struct AtomicFileLocation {
  /// An open directory that `path`'s last component is relative to (openat,
  /// renameat): its path is not resolved again, so a symbolic link planted
  /// there cannot redirect the write. -1: `path` as it is.
  int directoryFd = -1;
  /// An open directory on the same file system where the temporary is
  /// created and renamed across from, and its path for messages: a run killed
  /// mid-write then leaves it there (aoa-run's staging directory), not beside
  /// the file. -1: beside the file.
  int temporaryDirectoryFd = -1;
  std::string temporaryDirectory;
};

/// Writes `contents` to `path` atomically (see the file comment), at
/// `location`. Messages show `path`.
Status writeFileAtomically(const std::string &path, std::string_view contents,
                           const AtomicFileLocation &location = {});

/// Copies the file `from` to `to` atomically (same protocol and location);
/// `from` is read through symbolic links.
Status copyFileAtomically(const std::string &from, const std::string &to,
                          const AtomicFileLocation &location = {});

/// Makes renames and creations in `directory` durable (fsync of the
/// directory; file systems that cannot sync directories are accepted).
Status syncDirectory(const std::string &directory);
/// The same for an open directory; `path` is for messages.
Status syncDirectory(int directoryFd, const std::string &path);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_ATOMICFILE_H
