//===- FileSystemSupport.cpp ----------------------------------------------===//
#include "FileSystemSupport.h"

#include "aoa/runtime/support/Messages.h"

#include <cerrno>
#include <chrono>
#include <unistd.h>

namespace aoa::runtime {

/// The hint for a failed write or reservation, by cause.
std::string writeFailureHint(int errnoValue) {
  switch (errnoValue) {
  case ENOSPC:
    return "the file system is full; free space or write the destination "
           "somewhere else";
  case EDQUOT:
    return "the disk quota is exhausted; free space or raise the quota";
  case EFBIG:
    return "the file is larger than the file-size limit (ulimit -f) or the "
           "file system's largest file";
  default:
    return kSystemErrorHint;
  }
}

/// The hint for a failed creation of the temporary file, by cause.
std::string createFailureHint(int errnoValue) {
  switch (errnoValue) {
  case ENOENT:
  case ENOTDIR:
    return "the destination directory does not exist; create it first";
  case EACCES:
  case EPERM:
    return "the destination directory is not writable by this user";
  case EROFS:
    return "the destination is on a read-only file system";
  default:
    return writeFailureHint(errnoValue);
  }
}

/// A number that differs between processes, calls and attempts (O_EXCL
/// catches the rare collision): the clock and the process id, mixed by
/// splitmix64's finalizer.
uint64_t temporarySuffix(int attempt) {
  uint64_t x =
      uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (uint64_t(::getpid()) << 40) ^ uint64_t(attempt);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/// Splits a path into its directory ("." when there is none) and file name.
std::pair<std::string, std::string> splitPath(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

} // namespace aoa::runtime
