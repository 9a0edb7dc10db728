//===- AtomicFile.h - Small files that appear whole or not at all -*- C++ -*-===//
//
// metadata.json and the run journal's companions must never be seen half
// written: they are written to a temporary name in the same directory,
// flushed, renamed over the final name, and the directory is synced.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_ATOMICFILE_H
#define AOA_RUNTIME_ATOMICFILE_H

#include "aoa/runtime/Error.h"

#include <string>
#include <string_view>

namespace aoa::runtime {

/// Writes `contents` to `path` atomically (see the file comment). With
/// `directoryFd` (an open directory, -1 for none) the temporary and the
/// final name are `path`'s last component relative to it (openat,
/// renameat): the directory's path is not resolved again, so a symbolic
/// link planted there cannot redirect the write. Messages show `path`.
Status writeFileAtomically(const std::string &path, std::string_view contents,
                           int directoryFd = -1);

/// Copies the file `from` to `to` atomically (same protocol, `directoryFd`
/// as above); `from` is read through symbolic links.
Status copyFileAtomically(const std::string &from, const std::string &to,
                          int directoryFd = -1);

/// Makes renames and creations in `directory` durable (fsync of the
/// directory; file systems that cannot sync directories are accepted).
Status syncDirectory(const std::string &directory);
/// The same for an open directory; `path` is for messages.
Status syncDirectory(int directoryFd, const std::string &path);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_ATOMICFILE_H
