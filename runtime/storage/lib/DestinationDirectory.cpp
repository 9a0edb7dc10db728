//===- DestinationDirectory.cpp -------------------------------------------===//
#include "DestinationDirectory.h"

#include "FileSystemSupport.h"
#include "aoa/runtime/support/Messages.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa::runtime {

namespace {

constexpr const char *kNoLinksHint =
    "aoa-run never follows a symbolic link inside the destination directory "
    "(it could lead outside); remove the link, or choose another directory";

/// Opens directory `name` in `parent` without following a link.
int openChildDirectory(int parent, const std::string &name) {
  return ::openat(parent, name.c_str(),
                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

} // namespace

std::string withoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

Error notADirectoryError(const std::string &path, EntryKind kind) {
  if (kind == EntryKind::SymbolicLink)
    return Error{quoteName(path) + " is a symbolic link", kNoLinksHint};
  return Error{quoteName(path) + " is " +
                   (kind == EntryKind::File ? "a file" : "not a directory") +
                   ", but aoa-run needs a directory there",
               "move it away, or choose another destination directory"};
}

Expected<FileDescriptor> openDirectory(const std::string &path) {
  FileDescriptor directory(
      ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!directory.isOpen())
    return Error{"cannot open the directory " + quoteName(path) + ": " +
                     errnoText(errno),
                 kSystemErrorHint};
  return directory;
}

Expected<FileDescriptor> openDirectoryBeneath(int root,
                                              const std::string &rootPath,
                                              std::string_view relative,
                                              bool create) {
  FileDescriptor current(::fcntl(root, F_DUPFD_CLOEXEC, 0));
  if (!current.isOpen())
    return Error{"cannot duplicate the handle of " + quoteName(rootPath) +
                     ": " + errnoText(errno),
                 kSystemErrorHint};
  std::string shown = rootPath;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = std::min(relative.find('/', start), relative.size());
    std::string name(relative.substr(start, end - start));
    start = end + 1;
    if (name.empty() || name == ".")
      continue;
    shown += "/" + name;
    FileDescriptor next(openChildDirectory(current.get(), name));
    if (!next.isOpen() && errno == ENOENT) {
      if (!create)
        return FileDescriptor();
      if (::mkdirat(current.get(), name.c_str(), 0777) != 0 && errno != EEXIST)
        return Error{"cannot create the directory " + quoteName(shown) + ": " +
                         errnoText(errno),
                     kSystemErrorHint};
      next = FileDescriptor(openChildDirectory(current.get(), name));
    }
    if (!next.isOpen()) {
      int error = errno;
      EntryKind kind = entryKind(current.get(), name);
      if (kind != EntryKind::Directory && kind != EntryKind::Missing)
        return notADirectoryError(shown, kind);
      return Error{"cannot open the directory " + quoteName(shown) + ": " +
                       errnoText(error),
                   kSystemErrorHint};
    }
    current = std::move(next);
  }
  return current;
}

Expected<FileDescriptor> openParentBeneath(int root,
                                           const std::string &rootPath,
                                           const std::string &relative,
                                           bool create) {
  return openDirectoryBeneath(root, rootPath, splitPath(relative).first,
                              create);
}

EntryKind entryKind(int directory, const std::string &name) {
  struct stat status;
  if (::fstatat(directory, name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0)
    return EntryKind::Missing;
  if (S_ISLNK(status.st_mode))
    return EntryKind::SymbolicLink;
  if (S_ISDIR(status.st_mode))
    return EntryKind::Directory;
  if (S_ISREG(status.st_mode))
    return EntryKind::File;
  return EntryKind::Other;
}

Expected<std::vector<std::pair<std::string, EntryKind>>>
listDirectory(int directory, const std::string &path) {
  // fdopendir takes over the descriptor it is given: give it a duplicate.
  int copy = ::fcntl(directory, F_DUPFD_CLOEXEC, 0);
  DIR *stream = copy >= 0 ? ::fdopendir(copy) : nullptr;
  if (!stream) {
    int error = errno;
    if (copy >= 0)
      ::close(copy);
    return Error{"cannot list the directory " + quoteName(path) + ": " +
                     errnoText(error),
                 kSystemErrorHint};
  }
  ::rewinddir(stream);
  std::vector<std::pair<std::string, EntryKind>> entries;
  errno = 0;
  while (const dirent *entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      entries.emplace_back(name, entryKind(directory, name));
    errno = 0;
  }
  int error = errno;
  ::closedir(stream);
  if (error)
    return Error{"cannot list the directory " + quoteName(path) + ": " +
                     errnoText(error),
                 kSystemErrorHint};
  std::sort(entries.begin(), entries.end());
  return entries;
}

Status removeTree(int directory, const std::string &path,
                  const std::string &name) {
  std::string shown = path + "/" + name;
  if (::unlinkat(directory, name.c_str(), 0) == 0 || errno == ENOENT)
    return Status();
  if (errno != EISDIR && errno != EPERM)
    return Error{"cannot remove " + quoteName(shown) + ": " + errnoText(errno),
                 kSystemErrorHint};
  FileDescriptor child(openChildDirectory(directory, name));
  if (!child.isOpen())
    return Error{"cannot open " + quoteName(shown) +
                     " to remove it: " + errnoText(errno),
                 kSystemErrorHint};
  Expected<std::vector<std::pair<std::string, EntryKind>>> entries =
      listDirectory(child.get(), shown);
  if (!entries.ok())
    return entries.error();
  for (const auto &entry : *entries)
    if (Status removed = removeTree(child.get(), shown, entry.first);
        !removed.ok())
      return removed;
  if (::unlinkat(directory, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return Error{"cannot remove " + quoteName(shown) + ": " + errnoText(errno),
                 kSystemErrorHint};
  return Status();
}

Expected<FileDescriptor> lockDestination(int staging,
                                         const std::string &destinationPath) {
  std::string path =
      destinationPath + "/" + kStagingDirectoryName + "/" + kLockFileName;
  FileDescriptor lock(::openat(
      staging, kLockFileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (!lock.isOpen()) {
    if (errno == ELOOP)
      return notADirectoryError(path, EntryKind::SymbolicLink);
    return Error{"cannot open the lock file " + quoteName(path) + ": " +
                     errnoText(errno),
                 kSystemErrorHint};
  }
  while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR)
      continue;
    if (errno == EWOULDBLOCK)
      return Error{"another aoa-run is writing to the destination directory " +
                       quoteName(destinationPath) + " (it holds " +
                       quoteName(path) + ")",
                   "wait for that run to end, or write to another directory; "
                   "two runs into one directory would mix their files"};
    return Error{"cannot lock " + quoteName(path) + ": " + errnoText(errno),
                 kSystemErrorHint};
  }
  return lock;
}

bool isDestinationLocked(int staging) {
  FileDescriptor lock(
      ::openat(staging, kLockFileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!lock.isOpen())
    return false;
  int result;
  while ((result = ::flock(lock.get(), LOCK_EX | LOCK_NB)) != 0 &&
         errno == EINTR) {
  }
  return result != 0 && errno == EWOULDBLOCK;
}

} // namespace aoa::runtime
