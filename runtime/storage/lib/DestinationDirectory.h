//===- DestinationDirectory.h - Paths beneath DST, by handle ----*- C++ -*-===//
//
// Private to the runtime library. aoa-run never follows a symbolic link
// inside the destination directory: every path beneath DST is resolved one
// component at a time from an open handle of DST (openat with O_NOFOLLOW and
// O_DIRECTORY, mkdirat), and files are then created, renamed and removed
// relative to the handle of their directory (openat, renameat, unlinkat).
// A link planted in DST (DST/.aoa-run, its files/ or journal, a destination
// subdirectory) is refused with its name instead of redirecting a write or
// a removal outside DST. DST's own path may pass through links: the user
// chose it.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_LIB_DESTINATIONDIRECTORY_H
#define AOA_RUNTIME_STORAGE_LIB_DESTINATIONDIRECTORY_H

#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/support/FileDescriptor.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aoa::runtime {

/// The staging directory's name in DST, and its lock file's.
inline constexpr const char *kStagingDirectoryName = ".aoa-run";
inline constexpr const char *kLockFileName = "lock";

/// `path` without trailing slashes ("/" stays).
std::string withoutTrailingSlashes(std::string path);

/// What a name in a directory is, not following a symbolic link.
enum class EntryKind { Missing, File, Directory, SymbolicLink, Other };

/// Opens the directory `path` (for DST itself: links in `path` are followed).
Expected<FileDescriptor> openDirectory(const std::string &path);

/// Opens the directory `relative` (slash-separated, without `..`) beneath
/// the open directory `root`, shown as `rootPath`, one component at a time
/// without following symbolic links. With `create`, missing components are
/// created; without, a missing one gives a closed descriptor (no error). A
/// link or a file on the way is an error naming it.
Expected<FileDescriptor> openDirectoryBeneath(int root,
                                              const std::string &rootPath,
                                              std::string_view relative,
                                              bool create);

/// The directory holding `relative` (a file's path beneath `root`), opened
/// as openDirectoryBeneath does.
Expected<FileDescriptor> openParentBeneath(int root,
                                           const std::string &rootPath,
                                           const std::string &relative,
                                           bool create);

/// What `name` in the open directory `directory` is.
EntryKind entryKind(int directory, const std::string &name);

/// The entries of the open directory `directory` (shown as `path`), with
/// their kinds, sorted by name.
Expected<std::vector<std::pair<std::string, EntryKind>>>
listDirectory(int directory, const std::string &path);

/// Removes `name` in the open directory `directory` (shown as `path`) and,
/// when it is a directory, everything beneath it, never following a
/// symbolic link: a link is removed, not what it points to. A missing name
/// is no error.
Status removeTree(int directory, const std::string &path,
                  const std::string &name);

/// Takes the exclusive lock of a destination directory: flock on the file
/// kLockFileName in its open staging directory `staging`, held until the
/// returned descriptor closes. Fails at once, naming `destinationPath`, when
/// another process holds it.
Expected<FileDescriptor> lockDestination(int staging,
                                         const std::string &destinationPath);

/// Whether another process holds that lock now (`staging` open as above).
bool isDestinationLocked(int staging);

/// The error for a path beneath DST that must be a directory but is not.
Error notADirectoryError(const std::string &path, EntryKind kind);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_LIB_DESTINATIONDIRECTORY_H
