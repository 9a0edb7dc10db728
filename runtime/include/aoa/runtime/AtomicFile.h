//===- AtomicFile.h - Small files that appear whole or not at all -*- C++ -*-===//
//
// metadata.json and the run journal's companions must never be seen half
// written: they are written to a temporary name in the same directory (or
// in a given directory of the same file system, such as DST/.aoa-run, so
// that a process killed meanwhile leaves its temporary there), flushed,
// renamed over the final name, and the directory is synced.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_ATOMICFILE_H
#define AOA_RUNTIME_ATOMICFILE_H

#include "aoa/runtime/Error.h"

#include <string>
#include <string_view>

namespace aoa::runtime {

/// Writes `contents` to `path` atomically (see the file comment), through a
/// temporary in `temporaryDirectory` (default: the directory of `path`).
Status writeFileAtomically(const std::string &path, std::string_view contents,
                           const std::string &temporaryDirectory = "");

/// Copies the file `from` to `to` atomically (same protocol); `from` is
/// read through symbolic links.
Status copyFileAtomically(const std::string &from, const std::string &to,
                          const std::string &temporaryDirectory = "");

/// Makes renames and creations in `directory` durable (fsync of the
/// directory; file systems that cannot sync directories are accepted).
Status syncDirectory(const std::string &directory);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_ATOMICFILE_H
