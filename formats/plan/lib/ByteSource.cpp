//===- ByteSource.cpp -----------------------------------------------------===//
#include "ByteSource.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa {
namespace binplan {

FileSource::~FileSource() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool FileSource::open(const std::string &path, std::string &error) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    error = std::strerror(errno);
    return false;
  }
  size_ = uint64_t(st.st_size);
  return true;
}

bool FileSource::read(uint64_t offset, uint64_t size, std::string &storage,
                      std::string_view &bytes, std::string &error) {
  storage.resize(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, storage.data() + done, size - done,
                        off_t(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = n < 0 ? std::strerror(errno) : "unexpected end of file";
      return false;
    }
    done += uint64_t(n);
  }
  bytes = storage;
  return true;
}

} // namespace binplan
} // namespace aoa
