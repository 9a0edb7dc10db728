//===- AtomicFile.cpp -----------------------------------------------------===//
#include "aoa/runtime/AtomicFile.h"

#include "FileSystemSupport.h"
#include "Messages.h"
#include "aoa/runtime/FileDescriptor.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace aoa::runtime {

Status syncDirectory(const std::string &directory) {
  FileDescriptor file(
      ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!file.isOpen())
    return Error{"opening the directory " + quoteName(directory) +
                     " to sync it failed: " + errnoText(errno),
                 kSystemErrorHint};
  // Some file systems cannot sync a directory (EINVAL); nothing is lost.
  if (::fsync(file.get()) != 0 && errno != EINVAL)
    return Error{"syncing the directory " + quoteName(directory) +
                     " failed, so a rename in it may not survive a crash: " +
                     errnoText(errno),
                 kSystemErrorHint};
  return Status();
}

Status writeFileAtomically(const std::string &path, std::string_view contents) {
  auto [directory, fileName] = splitPath(path);
  std::string temporary;
  FileDescriptor file;
  for (int attempt = 0; !file.isOpen() && attempt < 100; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof(suffix), "%08x",
                  unsigned(temporarySuffix(attempt)));
    temporary = directory + "/." + fileName + ".tmp." + suffix;
    file = FileDescriptor(::open(
        temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (!file.isOpen() && errno != EEXIST) {
      int error = errno;
      return Error{"cannot create " + quoteName(temporary) + ": " +
                       errnoText(error),
                   createFailureHint(error)};
    }
  }
  if (!file.isOpen())
    return Error{"cannot find an unused temporary name for " + quoteName(path),
                 "remove stale .*.tmp.* files from " + quoteName(directory)};
  auto fail = [&](const std::string &what, int error) -> Error {
    ::unlink(temporary.c_str());
    return Error{what + " failed: " + errnoText(error),
                 writeFailureHint(error)};
  };
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(file.get(), contents.data() + done,
                        contents.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail("writing " + quoteName(temporary), errno);
    done += size_t(n);
  }
  if (::fsync(file.get()) != 0)
    return fail("flushing " + quoteName(temporary), errno);
  if (int error = file.close())
    return fail("closing " + quoteName(temporary), error);
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    return fail("renaming " + quoteName(temporary) + " to " + quoteName(path),
                errno);
  return syncDirectory(directory);
}

} // namespace aoa::runtime
