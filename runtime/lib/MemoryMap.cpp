//===- MemoryMap.cpp ------------------------------------------------------===//
#include "aoa/runtime/MemoryMap.h"

#include <cerrno>
#include <sys/mman.h>

namespace aoa::runtime {

MemoryMap &MemoryMap::operator=(MemoryMap &&other) noexcept {
  if (this != &other) {
    unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MemoryMap::~MemoryMap() { unmap(); }

int MemoryMap::map(int fd, size_t size) {
  unmap();
  if (size == 0)
    return 0;
  void *address = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (address == MAP_FAILED)
    return errno;
  data_ = static_cast<const uint8_t *>(address);
  size_ = size;
  return 0;
}

void MemoryMap::unmap() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

} // namespace aoa::runtime
