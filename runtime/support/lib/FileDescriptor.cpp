//===- FileDescriptor.cpp -------------------------------------------------===//
#include "aoa/runtime/support/FileDescriptor.h"

#include "aoa/runtime/support/FaultInjection.h"

#include <algorithm>
#include <cerrno>
#include <memory>
#include <unistd.h>

namespace aoa::runtime {

FileDescriptor &FileDescriptor::operator=(FileDescriptor &&other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() { close(); }

int FileDescriptor::close() {
  if (fd_ < 0)
    return 0;
  // Linux frees the descriptor even when close fails (also on EINTR), so it
  // must not be retried: it could close a descriptor another thread opened.
  int result = ::close(std::exchange(fd_, -1));
  return result == 0 ? 0 : errno;
}

namespace {
// Linux transfers at most 0x7ffff000 bytes per call; asking for less keeps
// every request within ssize_t on any platform.
constexpr size_t kMaxChunk = size_t(1) << 30;

/// The loop behind readAt and writeAt. `transfer` is one pread or pwrite;
/// `errorAtZero` says what a call that moves nothing means (0: end of file).
template <typename Byte, typename Transfer>
TransferResult transferAll(Byte *buffer, size_t size, uint64_t offset,
                           int errorAtZero, Transfer transfer) {
  TransferResult result;
  while (result.bytes < size) {
    size_t chunk = std::min(size - result.bytes, kMaxChunk);
    ssize_t n = transfer(buffer + result.bytes, chunk,
                         static_cast<off_t>(offset + result.bytes));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      result.error = n < 0 ? errno : errorAtZero;
      return result;
    }
    result.bytes += static_cast<size_t>(n);
  }
  return result;
}

/// The buffer of copyAt's fallback.
constexpr size_t kCopyChunk = size_t(4) << 20;

/// Whether copy_file_range failed because these files cannot use it (other
/// file systems, an old kernel, special files), not because of an I/O error.
bool kernelCopyUnsupported(int error) {
  return error == EXDEV || error == EINVAL || error == ENOSYS ||
         error == EOPNOTSUPP || error == ENOTSUP;
}

} // namespace

TransferResult copyAt(int from, uint64_t fromOffset, int to,
                      uint64_t toOffset, size_t size) {
  TransferResult result;
  while (result.bytes < size) {
    loff_t in = loff_t(fromOffset + result.bytes);
    loff_t out = loff_t(toOffset + result.bytes);
    ssize_t n = injectedFault(FaultPoint::Read) ||
                        injectedFault(FaultPoint::Write)
                    ? -1
                    : ::copy_file_range(from, &in, to, &out,
                                        std::min(size - result.bytes, kMaxChunk),
                                        0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && kernelCopyUnsupported(errno))
      break;
    if (n < 0) {
      result.error = errno;
      return result;
    }
    if (n == 0)
      return result; // the end of `from`
    result.bytes += size_t(n);
  }
  if (result.bytes == size)
    return result;
  // The rest through user memory, a bounded chunk at a time.
  std::unique_ptr<unsigned char[]> chunk(
      new unsigned char[std::min(size - result.bytes, kCopyChunk)]);
  while (result.bytes < size) {
    size_t want = std::min(size - result.bytes, kCopyChunk);
    TransferResult read =
        readAt(from, chunk.get(), want, fromOffset + result.bytes);
    if (read.bytes > 0) {
      TransferResult written =
          writeAt(to, chunk.get(), read.bytes, toOffset + result.bytes);
      result.bytes += written.bytes;
      if (written.error) {
        result.error = written.error;
        return result;
      }
    }
    if (read.error || read.bytes < want) {
      result.error = read.error;
      return result;
    }
  }
  return result;
}

TransferResult readAt(int fd, void *buffer, size_t size, uint64_t offset) {
  return transferAll(static_cast<unsigned char *>(buffer), size, offset,
                     /*errorAtZero=*/0,
                     [fd](unsigned char *at, size_t count, off_t position) {
                       return injectedFault(FaultPoint::Read)
                                  ? -1
                                  : ::pread(fd, at, count, position);
                     });
}

TransferResult writeAt(int fd, const void *buffer, size_t size,
                       uint64_t offset) {
  return transferAll(
      static_cast<const unsigned char *>(buffer), size, offset,
      /*errorAtZero=*/ENOSPC,
      [fd](const unsigned char *at, size_t count, off_t position) {
        return injectedFault(FaultPoint::Write)
                   ? -1
                   : ::pwrite(fd, at, count, position);
      });
}

} // namespace aoa::runtime
