//===- PaddedIndexText.cpp - An index's text, mapped or read --------------===//
#include "PaddedIndexText.h"

#include "aoa/runtime/support/FileDescriptor.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace aoa::formats {

using runtime::Error;
using runtime::Expected;

PaddedFileText::PaddedFileText(PaddedFileText &&other) noexcept
    : mapping_(std::exchange(other.mapping_, nullptr)),
      mappedSize_(std::exchange(other.mappedSize_, 0)),
      buffer_(std::move(other.buffer_)), capacity_(other.capacity_) {
  text_ = mapping_ ? other.text_
                   : std::string_view(buffer_.data(), other.text_.size());
}

PaddedFileText::~PaddedFileText() {
  if (mapping_)
    ::munmap(mapping_, mappedSize_);
}

Expected<PaddedFileText> PaddedFileText::read(const std::string &path) {
  runtime::FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.isOpen())
    return Error{path + ": cannot open: " + runtime::errnoText(errno),
                 "check the path and the file's permissions"};
  struct stat status;
  if (::fstat(file.get(), &status) != 0)
    return Error{path + ": cannot stat: " + runtime::errnoText(errno),
                 "check the disk and the file system, then retry"};
  PaddedFileText result;
  size_t size = size_t(status.st_size);
  size_t page = size_t(::sysconf(_SC_PAGESIZE));
  if (S_ISREG(status.st_mode) && size % page != 0 &&
      page - size % page >= kIndexTextPadding) {
    void *mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                           file.get(), 0);
    if (mapping != MAP_FAILED) {
      result.mapping_ = mapping;
      result.mappedSize_ = size;
      result.text_ = std::string_view(static_cast<const char *>(mapping), size);
      // The rest of the last page reads as zeros.
      result.capacity_ = size + (page - size % page);
      return result;
    }
  }
  result.buffer_.reserve(size + kIndexTextPadding);
  result.buffer_.resize(size);
  runtime::TransferResult read =
      runtime::readAt(file.get(), result.buffer_.data(), size, 0);
  if (read.error)
    return Error{path + ": cannot read: " + runtime::errnoText(read.error),
                 "check the disk and the file system, then retry"};
  result.buffer_.resize(read.bytes);
  result.text_ = result.buffer_;
  result.capacity_ = result.buffer_.capacity();
  return result;
}

} // namespace aoa::formats
