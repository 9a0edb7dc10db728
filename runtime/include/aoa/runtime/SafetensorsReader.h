//===- SafetensorsReader.h - Reading a safetensors file ---------*- C++ -*-===//
//
// Opening a file reads and validates its header (SafetensorsHeader.h) against
// the file's real size: a sane header length, well-formed JSON, known dtypes,
// byte sizes that match the shapes, offsets inside the data section (a
// truncated file is caught here, not at the first read), no overlaps, no
// duplicate names. Afterwards any byte range of any tensor can be read into a
// caller's buffer, with pread (the default) or from a read-only mapping.
//
// Reads are const and positioned, so several threads may read from one
// reader at once.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SAFETENSORSREADER_H
#define AOA_RUNTIME_SAFETENSORSREADER_H

#include "aoa/runtime/Error.h"
#include "aoa/runtime/FileDescriptor.h"
#include "aoa/runtime/MemoryMap.h"
#include "aoa/runtime/SafetensorsHeader.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aoa::runtime {

struct SafetensorsReaderOptions {
  /// Map the file and copy out of the mapping instead of calling pread.
  /// Saves a system call per read; see MemoryMap.h for the trade-off.
  bool memoryMap = false;
};

class SafetensorsReader {
public:
  /// Opens `path` and validates its header.
  static Expected<SafetensorsReader>
  open(std::string path, SafetensorsReaderOptions options = {});

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
  /// With ReadMethod::Auto a mapped file is copied from its mapping;
  /// ReadMethod::SystemCall always uses pread (large reads then do not make
  /// the file's pages part of this process's resident memory).
  enum class ReadMethod { Auto, SystemCall };
  Status readBytes(const SafetensorsTensor &tensor, uint64_t offset,
                   void *buffer, size_t size,
                   ReadMethod method = ReadMethod::Auto) const;
  /// Reads elements [first, first + count) of the row-major flattening.
  Status readElements(const SafetensorsTensor &tensor, uint64_t first,
                      uint64_t count, void *buffer) const;
  /// Reads the whole tensor; `bufferSize` must be at least its byte size.
  Status readTensor(const SafetensorsTensor &tensor, void *buffer,
                    size_t bufferSize) const;

  /// The xxh3-64 of the tensor's bytes (ContentHash.h), read in chunks.
  Expected<uint64_t> contentHash(const SafetensorsTensor &tensor) const;

  /// Drops the whole pages of bytes [offset, offset + size) of `tensor` in
  /// the mapping from this process's resident memory (MemoryMap::release);
  /// does nothing when the file is not mapped.
  void releaseMapped(const SafetensorsTensor &tensor, uint64_t offset,
                     uint64_t size) const {
    map_.release(size_t(dataOffset_ + tensor.dataBegin + offset), size_t(size));
  }

  /// The tensor's bytes inside the mapping (no copy), or nullopt when the
  /// file is not mapped or the tensor's range is not in the file.
  std::optional<llvm::ArrayRef<uint8_t>>
  mappedBytes(const SafetensorsTensor &tensor) const;

private:
  SafetensorsReader() = default;
  Error failTensor(const SafetensorsTensor &tensor, std::string what,
                   std::string hint) const;

  std::string path_;
  FileDescriptor file_;
  MemoryMap map_;
  SafetensorsHeader header_;
  uint64_t dataOffset_ = 0;
  uint64_t fileSize_ = 0;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SAFETENSORSREADER_H
