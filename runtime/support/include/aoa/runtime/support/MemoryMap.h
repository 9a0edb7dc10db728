//===- MemoryMap.h - An owned read-only mapping of a file -------*- C++ -*-===//
//
// Maps a whole file read-only and unmaps it when destroyed. Reading through a
// mapping saves a copy, but a file truncated by someone else while mapped
// raises SIGBUS on access; pread-based reading reports that case as an error
// instead, which is why mapping is optional for readers.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SUPPORT_MEMORYMAP_H
#define AOA_RUNTIME_SUPPORT_MEMORYMAP_H

#include <cstddef>
#include <cstdint>
#include <utility>

namespace aoa::runtime {

class MemoryMap {
public:
  MemoryMap() = default;
  MemoryMap(MemoryMap &&other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        writable_(std::exchange(other.writable_, false)) {}
  MemoryMap &operator=(MemoryMap &&other) noexcept;
  MemoryMap(const MemoryMap &) = delete;
  MemoryMap &operator=(const MemoryMap &) = delete;
  ~MemoryMap();

  /// Maps the first `size` bytes of `fd` read-only. Returns 0, or the errno
  /// of the failed mmap (the object is then empty). A size of 0 maps nothing
  /// and succeeds.
  int map(int fd, size_t size);
  /// As map, read-write and shared: stores become the file's data. The
  /// file must be at least `size` long, with its blocks allocated, or a
  /// store may fault.
  int mapWritable(int fd, size_t size);

  const uint8_t *data() const { return data_; }
  /// The mapping, when it was made by mapWritable; null otherwise.
  uint8_t *writableData() const {
    return writable_ ? const_cast<uint8_t *>(data_) : nullptr;
  }
  size_t size() const { return size_; }
  bool isMapped() const { return data_ != nullptr; }

  /// Drops this process's page table entries for the whole pages inside
  /// bytes [offset, offset + size) of the mapping. The data stays in the
  /// page cache (dirty pages of a writable mapping stay dirty), so later
  /// accesses fault it back in; only the process's resident size shrinks.
  /// Partial pages at the edges are kept: a neighbour may be using them.
  void release(size_t offset, size_t size) const;

private:
  void unmap();
  int mapWith(int fd, size_t size, bool writable);
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  bool writable_ = false;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SUPPORT_MEMORYMAP_H
