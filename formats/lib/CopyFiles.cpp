//===- CopyFiles.cpp ------------------------------------------------------===//
#include "aoa/formats/CopyFiles.h"

#include "Text.h"

#include "aoa/runtime/AtomicFile.h"
#include "aoa/runtime/FileDescriptor.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace aoa::formats {

using runtime::errnoText;
using runtime::Error;
using runtime::FileDescriptor;
using runtime::Status;

namespace {

const char *const kSystemHint =
    "the operating system reported the failure; check the disk, the file "
    "system and the permissions, then retry";

/// Copies one file to a temporary name beside `to` and renames it there.
Status copyOne(const std::string &from, const std::string &to,
               const std::string &toDirectory, std::string_view name,
               uint64_t seed) {
  FileDescriptor source(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!source.isOpen())
    return Error{from + ": cannot open: " + errnoText(errno),
                 errno == ENOENT ? "the file (or the target of its symbolic "
                                   "link) is missing; fetch it again"
                                 : kSystemHint};
  struct stat status;
  if (::fstat(source.get(), &status) != 0)
    return Error{from + ": cannot stat: " + errnoText(errno), kSystemHint};
  if (!S_ISREG(status.st_mode))
    return Error{from + ": not a regular file", "copy regular files only"};

  std::string temporary;
  FileDescriptor target;
  for (int attempt = 0; !target.isOpen() && attempt < 100; ++attempt) {
    char suffix[24];
    std::snprintf(
        suffix, sizeof(suffix), "%08x",
        unsigned((seed + uint64_t(attempt) * 0x9E3779B97F4A7C15ull) >> 32));
    temporary =
        joinPath(toDirectory, "." + std::string(name) + ".tmp." + suffix);
    target = FileDescriptor(::open(
        temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (!target.isOpen() && errno != EEXIST)
      return Error{temporary + ": cannot create: " + errnoText(errno),
                   kSystemHint};
  }
  if (!target.isOpen())
    return Error{"cannot find an unused temporary name for " + to,
                 "remove stale .*.tmp.* files from " + toDirectory};
  auto fail = [&](const std::string &what, int error) -> Error {
    ::unlink(temporary.c_str());
    return Error{what + ": " + errnoText(error), kSystemHint};
  };
  uint64_t size = uint64_t(status.st_size);
  uint64_t done = 0;
  while (done < size) {
    size_t piece = size_t(std::min<uint64_t>(size - done, 1ull << 30));
    runtime::TransferResult moved =
        runtime::copyAt(source.get(), done, target.get(), done, piece);
    if (moved.error)
      return fail("copying " + from + " to " + temporary + " failed",
                  moved.error);
    if (moved.bytes == 0) {
      ::unlink(temporary.c_str());
      return Error{from + ": the file became shorter while it was copied",
                   "copy it again when nothing else writes to it"};
    }
    done += moved.bytes;
  }
  if (::fsync(target.get()) != 0)
    return fail("flushing " + temporary + " failed", errno);
  if (int error = target.close())
    return fail("closing " + temporary + " failed", error);
  if (::rename(temporary.c_str(), to.c_str()) != 0)
    return fail("renaming " + temporary + " to " + to + " failed", errno);
  return Status();
}

} // namespace

Status copyFilesAtomically(const std::string &fromDirectory,
                           llvm::ArrayRef<std::string> names,
                           const std::string &toDirectory, bool overwrite) {
  for (const std::string &name : names) {
    if (!isSafeRelativePath(name) || name.find('/') != std::string::npos)
      return Error{"cannot copy " + quote(name) + ": not a plain file name",
                   "copy the files of one directory, by name"};
    struct stat status;
    if (!overwrite &&
        ::lstat(joinPath(toDirectory, name).c_str(), &status) == 0)
      return Error{joinPath(toDirectory, name) + ": already exists",
                   "write into an empty directory, or allow replacing "
                   "existing files"};
  }
  std::random_device random;
  uint64_t seed = (uint64_t(random()) << 32) ^ uint64_t(::getpid());
  std::vector<std::string> created;
  for (const std::string &name : names) {
    std::string to = joinPath(toDirectory, name);
    struct stat status;
    bool existed = ::lstat(to.c_str(), &status) == 0;
    Status copied =
        copyOne(joinPath(fromDirectory, name), to, toDirectory, name, seed++);
    if (!copied) {
      for (const std::string &path : created)
        ::unlink(path.c_str());
      return copied;
    }
    if (!existed)
      created.push_back(to);
  }
  return runtime::syncDirectory(toDirectory);
}

} // namespace aoa::formats
