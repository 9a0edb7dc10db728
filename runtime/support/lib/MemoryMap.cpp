//===- MemoryMap.cpp ------------------------------------------------------===//
#include "aoa/runtime/support/MemoryMap.h"

#include <cerrno>
#include <algorithm>
#include <sys/mman.h>
#include <unistd.h>

namespace aoa::runtime {

MemoryMap &MemoryMap::operator=(MemoryMap &&other) noexcept {
  if (this != &other) {
    unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    writable_ = std::exchange(other.writable_, false);
  }
  return *this;
}

MemoryMap::~MemoryMap() { unmap(); }

int MemoryMap::map(int fd, size_t size) { return mapWith(fd, size, false); }

int MemoryMap::mapWritable(int fd, size_t size) {
  return mapWith(fd, size, true);
}

int MemoryMap::mapWith(int fd, size_t size, bool writable) {
  unmap();
  if (size == 0)
    return 0;
  void *address = ::mmap(nullptr, size,
                         writable ? PROT_READ | PROT_WRITE : PROT_READ,
                         MAP_SHARED, fd, 0);
  if (address == MAP_FAILED)
    return errno;
  data_ = static_cast<const uint8_t *>(address);
  size_ = size;
  writable_ = writable;
  return 0;
}

void MemoryMap::release(size_t offset, size_t size) const {
  static const size_t kPage = size_t(::sysconf(_SC_PAGESIZE));
  if (!data_ || offset >= size_ || size == 0)
    return;
  size = std::min(size, size_ - offset);
  // The mapping starts on a page boundary, so offsets align like addresses.
  size_t first = (offset + kPage - 1) / kPage * kPage;
  size_t last = (offset + size) / kPage * kPage;
  if (first < last)
    (void)::madvise(const_cast<uint8_t *>(data_) + first, last - first,
                    MADV_DONTNEED);
}

void MemoryMap::unmap() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  writable_ = false;
}

} // namespace aoa::runtime
