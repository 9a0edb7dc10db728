//===- FileDescriptor.h - An owned POSIX file descriptor --------*- C++ -*-===//
//
// FileDescriptor owns one descriptor and closes it when destroyed. readAt and
// writeAt are positioned transfers (pread/pwrite) that loop until the whole
// range has moved: the kernel may transfer less than asked (signals, pipes,
// ranges over 2 GiB), and EINTR is not a failure. Being positioned, several
// threads may use one descriptor at once for disjoint ranges.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SUPPORT_FILEDESCRIPTOR_H
#define AOA_RUNTIME_SUPPORT_FILEDESCRIPTOR_H

#include <cstddef>
#include <cstdint>
#include <utility>

namespace aoa::runtime {

class FileDescriptor {
public:
  FileDescriptor() = default;
  /// Takes ownership of `fd` (-1 for none).
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor &&other) noexcept
      : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor &operator=(FileDescriptor &&other) noexcept;
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor();

  int get() const { return fd_; }
  bool isOpen() const { return fd_ >= 0; }

  /// Closes now and returns close()'s errno, or 0. After writing this matters:
  /// some file systems (NFS, quotas) report a failed write only here.
  int close();

private:
  int fd_ = -1;
};

/// How much a positioned transfer moved, and why it stopped early.
struct TransferResult {
  size_t bytes = 0;
  /// errno of the failing call; 0 when nothing failed.
  int error = 0;
};

/// Reads `size` bytes at `offset`. Stops early only at end of file (error 0,
/// bytes < size) or when a read fails (error set).
TransferResult readAt(int fd, void *buffer, size_t size, uint64_t offset);

/// Writes `size` bytes at `offset`. Stops early only when a write fails; a
/// write that makes no progress is reported as ENOSPC.
TransferResult writeAt(int fd, const void *buffer, size_t size,
                       uint64_t offset);

/// Copies `size` bytes from `from` at `fromOffset` to `to` at `toOffset`
/// inside the kernel (copy_file_range: no trip through user memory, or a
/// reflink), or, where the file systems cannot do that, through a bounded
/// buffer with pread and pwrite. Positioned, like readAt and writeAt. Stops
/// early only at the end of `from` (error 0) or when a call fails.
TransferResult copyAt(int from, uint64_t fromOffset, int to,
                      uint64_t toOffset, size_t size);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SUPPORT_FILEDESCRIPTOR_H
