//===- AtomicFile.cpp -----------------------------------------------------===//
#include "aoa/runtime/storage/AtomicFile.h"

#include "FileSystemSupport.h"
#include "aoa/runtime/support/FaultInjection.h"
#include "aoa/runtime/support/FileDescriptor.h"
#include "aoa/runtime/support/Messages.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa::runtime {

Status syncDirectory(const std::string &directory) {
  FileDescriptor file(
      ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!file.isOpen())
    return Error{"opening the directory " + quoteName(directory) +
                     " to sync it failed: " + errnoText(errno),
                 kSystemErrorHint};
  return syncDirectory(file.get(), directory);
}

Status syncDirectory(int directoryFd, const std::string &path) {
  // Some file systems cannot sync a directory (EINVAL); nothing is lost.
  if ((injectedFault(FaultPoint::Fsync) || ::fsync(directoryFd) != 0) &&
      errno != EINVAL)
    return Error{"syncing the directory " + quoteName(path) +
                     " failed, so a rename in it may not survive a crash: " +
                     errnoText(errno),
                 kSystemErrorHint};
  return Status();
}

namespace {

/// Writes all of `data` to `fd`; false with errno set on failure.
bool writeAll(int fd, const char *data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = injectedFault(FaultPoint::Write)
                    ? -1
                    : ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    done += size_t(n);
  }
  return true;
}

/// The atomic-write protocol of the file comment; `fill` writes the
/// contents into the temporary (an open, empty file).
Status writeAtomicallyWith(
    const std::string &path, const AtomicFileLocation &location,
    llvm::function_ref<Status(int fd, const std::string &temporary)> fill) {
  auto [directory, fileName] = splitPath(path);
  // Names for the calls below: relative to a directory handle when there is
  // one. The final name's directory, and the temporary's:
  int at = location.directoryFd >= 0 ? location.directoryFd : AT_FDCWD;
  std::string finalName = location.directoryFd >= 0 ? fileName : path;
  bool apart = location.temporaryDirectoryFd >= 0;
  int temporaryAt = apart ? location.temporaryDirectoryFd : at;
  const std::string &temporaries =
      apart ? location.temporaryDirectory : directory;
  std::string temporary, temporaryName;
  FileDescriptor file;
  for (int attempt = 0; !file.isOpen() && attempt < 100; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof(suffix), "%08x",
                  unsigned(temporarySuffix(attempt)));
    std::string name = "." + fileName + ".tmp." + suffix;
    temporary = temporaries + "/" + name;
    temporaryName =
        apart || location.directoryFd >= 0 ? name : temporary;
    file = FileDescriptor(::openat(temporaryAt, temporaryName.c_str(),
                                   O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                                   0666));
    if (!file.isOpen() && errno != EEXIST) {
      int error = errno;
      return Error{"cannot create " + quoteName(temporary) + ": " +
                       errnoText(error),
                   createFailureHint(error)};
    }
  }
  if (!file.isOpen())
    return Error{"cannot find an unused temporary name for " + quoteName(path),
                 "remove stale .*.tmp.* files from " + quoteName(temporaries)};
  auto fail = [&](const std::string &what, int error) -> Error {
    ::unlinkat(temporaryAt, temporaryName.c_str(), 0);
    return Error{what + " failed: " + errnoText(error),
                 writeFailureHint(error)};
  };
  if (Status filled = fill(file.get(), temporary); !filled.ok()) {
    ::unlinkat(temporaryAt, temporaryName.c_str(), 0);
    return filled;
  }
  if (injectedFault(FaultPoint::Fsync) || ::fsync(file.get()) != 0)
    return fail("flushing " + quoteName(temporary), errno);
  if (int error = file.close())
    return fail("closing " + quoteName(temporary), error);
  if (injectedFault(FaultPoint::Rename) ||
      ::renameat(temporaryAt, temporaryName.c_str(), at, finalName.c_str()) !=
          0)
    return fail("renaming " + quoteName(temporary) + " to " + quoteName(path),
                errno);
  return location.directoryFd >= 0
             ? syncDirectory(location.directoryFd, directory)
             : syncDirectory(directory);
}

} // namespace

Status writeFileAtomically(const std::string &path, std::string_view contents,
                           const AtomicFileLocation &location) {
  return writeAtomicallyWith(
      path, location, [&](int fd, const std::string &temporary) -> Status {
        if (!writeAll(fd, contents.data(), contents.size())) {
          int error = errno;
          return Error{"writing " + quoteName(temporary) +
                           " failed: " + errnoText(error),
                       writeFailureHint(error)};
        }
        return Status();
      });
}

Status copyFileAtomically(const std::string &from, const std::string &to,
                          const AtomicFileLocation &location) {
  FileDescriptor source(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!source.isOpen()) {
    int error = errno;
    return Error{"cannot open " + quoteName(from) + " to copy it: " +
                     errnoText(error),
                 error == ENOENT ? "the file (or the target of its symbolic "
                                   "link) is missing; fetch it again"
                                 : kSystemErrorHint};
  }
  struct stat status;
  if (::fstat(source.get(), &status) != 0) {
    int error = errno;
    return Error{"cannot stat " + quoteName(from) + ": " + errnoText(error),
                 kSystemErrorHint};
  }
  if (!S_ISREG(status.st_mode))
    return Error{"cannot copy " + quoteName(from) + ": not a regular file",
                 "only regular files (or links to them) are copied"};
  uint64_t size = uint64_t(status.st_size);
  return writeAtomicallyWith(
      to, location, [&](int fd, const std::string &temporary) -> Status {
        for (uint64_t done = 0; done < size;) {
          size_t piece = size_t(std::min<uint64_t>(size - done, 1ull << 30));
          TransferResult moved = copyAt(source.get(), done, fd, done, piece);
          if (moved.error)
            return Error{"copying " + quoteName(from) + " to " +
                             quoteName(temporary) +
                             " failed: " + errnoText(moved.error),
                         writeFailureHint(moved.error)};
          if (moved.bytes == 0)
            return Error{quoteName(from) +
                             " became shorter while it was copied",
                         "copy it again when nothing else writes to it"};
          done += moved.bytes;
        }
        return Status();
      });
}

} // namespace aoa::runtime
