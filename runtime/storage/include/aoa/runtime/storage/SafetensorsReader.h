//===- SafetensorsReader.h - Reading a safetensors file ---------*- C++ -*-===//
//
// Opening a file reads and validates its header (SafetensorsHeader.h) against
// the file's real size: a sane header length, well-formed JSON, known dtypes,
// byte sizes that match the shapes, offsets inside the data section (a
// truncated file is caught here, not at the first read), no overlaps, no
// duplicate names. Afterwards any byte range of any tensor can be read into a
// caller's buffer with pread.
//
// Files are never mapped: a mapped file that another process truncates
// raises SIGBUS at the next access, while pread reports the short read as
// an error naming the file.
//
// Reads are const and positioned, so several threads may read from one
// reader at once.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_SAFETENSORSREADER_H
#define AOA_RUNTIME_STORAGE_SAFETENSORSREADER_H

#include "aoa/runtime/storage/SafetensorsHeader.h"
#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/support/FileDescriptor.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aoa::runtime {

class SafetensorsReader {
public:
  /// Opens `path` and validates its header.
  static Expected<SafetensorsReader> open(std::string path);

  SafetensorsReader(SafetensorsReader &&) = default;
  SafetensorsReader &operator=(SafetensorsReader &&) = default;

  const std::string &path() const { return path_; }
  const SafetensorsHeader &header() const { return header_; }
  llvm::ArrayRef<SafetensorsTensor> tensors() const {
    return header_.tensors();
  }
  /// The tensor called `name`, or null.
  const SafetensorsTensor *find(std::string_view name) const {
    return header_.find(name);
  }
  /// Where the data section starts in the file (8 + header length).
  uint64_t dataOffset() const { return dataOffset_; }
  uint64_t fileSize() const { return fileSize_; }
  /// The open file (read-only), for positioned transfers such as copyAt.
  int fileDescriptor() const { return file_.get(); }

  /// Reads bytes [offset, offset + size) of `tensor`'s data into `buffer`.
  /// Fails when the range is not inside the tensor, when the file has become
  /// shorter since it was opened, or when the system reports an error.
  Status readBytes(const SafetensorsTensor &tensor, uint64_t offset,
                   void *buffer, size_t size) const;
  /// Reads elements [first, first + count) of the row-major flattening.
  Status readElements(const SafetensorsTensor &tensor, uint64_t first,
                      uint64_t count, void *buffer) const;
  /// Reads the whole tensor; `bufferSize` must be at least its byte size.
  Status readTensor(const SafetensorsTensor &tensor, void *buffer,
                    size_t bufferSize) const;

  /// The xxh3-64 of the tensor's bytes (ContentHash.h), read in chunks.
  Expected<uint64_t> contentHash(const SafetensorsTensor &tensor) const;

private:
  SafetensorsReader() = default;
  Error failTensor(const SafetensorsTensor &tensor, std::string what,
                   std::string hint) const;

  std::string path_;
  FileDescriptor file_;
  SafetensorsHeader header_;
  uint64_t dataOffset_ = 0;
  uint64_t fileSize_ = 0;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_SAFETENSORSREADER_H
