//===- MemoryMap.h - An owned read-only mapping of a file -------*- C++ -*-===//
//
// Maps a whole file read-only and unmaps it when destroyed. Reading through a
// mapping saves a copy, but a file truncated by someone else while mapped
// raises SIGBUS on access; pread-based reading reports that case as an error
// instead, which is why mapping is optional for readers.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_MEMORYMAP_H
#define AOA_RUNTIME_MEMORYMAP_H

#include <cstddef>
#include <cstdint>
#include <utility>

namespace aoa::runtime {

class MemoryMap {
public:
  MemoryMap() = default;
  MemoryMap(MemoryMap &&other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  MemoryMap &operator=(MemoryMap &&other) noexcept;
  MemoryMap(const MemoryMap &) = delete;
  MemoryMap &operator=(const MemoryMap &) = delete;
  ~MemoryMap();

  /// Maps the first `size` bytes of `fd` read-only. Returns 0, or the errno
  /// of the failed mmap (the object is then empty). A size of 0 maps nothing
  /// and succeeds.
  int map(int fd, size_t size);

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  bool isMapped() const { return data_ != nullptr; }

private:
  void unmap();
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_MEMORYMAP_H
