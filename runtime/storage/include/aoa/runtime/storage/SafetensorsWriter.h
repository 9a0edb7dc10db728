//===- SafetensorsWriter.h - Writing a safetensors file ---------*- C++ -*-===//
//
// All tensors are declared up front (name, dtype, shape), so the header and
// every tensor's place in the file are known before any data arrives; data is
// then written by byte ranges, in any order, from any number of threads
// (positioned writes into disjoint ranges).
//
// The layout is the official library's: tensors sorted by dtype alignment
// (largest first), then by name, packed back to back after a header padded
// to 8 bytes, so every tensor is aligned to its element size and the file is
// byte-identical to what Python's safetensors.save_file would write.
//
// Atomicity: the file is written under a temporary name in the destination's
// directory (".NAME.tmp.XXXXXX"). commit() checks that the data is complete,
// fsyncs the file, renames it over the final name and fsyncs the directory.
// A writer destroyed without a successful commit removes the temporary, so a
// failed or interrupted run never leaves a partial file under the final name.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_SAFETENSORSWRITER_H
#define AOA_RUNTIME_STORAGE_SAFETENSORSWRITER_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/storage/SafetensorsHeader.h"
#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/support/FileDescriptor.h"
#include "aoa/runtime/support/MemoryMap.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aoa::runtime {

struct TensorDeclaration {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
};

struct SafetensorsWriterOptions {
  /// Reserve the file's blocks when it is created, so that a full disk is
  /// reported before any data is written rather than in the middle. Ignored
  /// where the file system cannot reserve space.
  bool reserveSpace = true;
  /// Also map the file read-write, so that writeMapped can store many
  /// short runs without a system call each. Only done where the space was
  /// reserved (a store into an unreserved mapping could fault on a full
  /// disk); isMapped() says whether it was. A mapped file has its full
  /// length from the start, so commit() cannot notice data that was never
  /// written: the caller must count what it wrote.
  bool mapForWrites = false;
  /// An open directory (-1: none) that holds the file: the temporary is
  /// created, renamed and removed by the path's last component relative to
  /// it (openat, renameat), never by resolving the directory's path again,
  /// which a symbolic link planted meanwhile could redirect. The writer
  /// keeps its own duplicate; the path is still what messages show.
  int directoryFd = -1;
};

class SafetensorsWriter {
public:
  /// Validates the declarations (unique, non-empty UTF-8 names other than
  /// "__metadata__"; non-negative extents; sizes that fit in 64 bits), lays
  /// the tensors out, creates the temporary file and writes the header.
  static Expected<SafetensorsWriter>
  create(std::string path, std::vector<TensorDeclaration> tensors,
         SafetensorsMetadata metadata = {},
         SafetensorsWriterOptions options = {});

  SafetensorsWriter(SafetensorsWriter &&other) noexcept;
  SafetensorsWriter &operator=(SafetensorsWriter &&) = delete;
  SafetensorsWriter(const SafetensorsWriter &) = delete;
  SafetensorsWriter &operator=(const SafetensorsWriter &) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~SafetensorsWriter();

  /// The final name.
  const std::string &path() const { return path_; }
  /// Where the data is written until commit().
  const std::string &temporaryPath() const { return temporaryPath_; }
  /// The temporary, open for reading and writing until commit() (-1 after),
  /// e.g. to read back what was written.
  int fileDescriptor() const { return file_.get(); }
  /// The header as written, tensors in file order with their data offsets.
  const SafetensorsHeader &header() const { return header_; }
  /// The size the finished file will have.
  uint64_t fileSize() const { return fileSize_; }

  /// Writes bytes [offset, offset + size) of tensor `name`'s data. May be
  /// called concurrently for disjoint ranges. After a failed write the file
  /// cannot be committed.
  Status write(std::string_view name, uint64_t offset, const void *data,
               size_t size);
  /// As write, by a copy into the file's mapping (see mapForWrites); falls
  /// back to write when the file is not mapped.
  Status writeMapped(std::string_view name, uint64_t offset, const void *data,
                     size_t size);
  /// As write, with the bytes at `sourceOffset` of the open file
  /// `sourceFd`, copied inside the kernel where possible (copyAt). Fails
  /// when the source file ends before `size` bytes.
  Status copyFromFile(std::string_view name, uint64_t offset, int sourceFd,
                      uint64_t sourceOffset, size_t size);
  bool isMapped() const { return map_.writableData() != nullptr; }
  /// Unmaps from this process the whole pages of [offset, offset + size) of
  /// tensor `name`'s data in the mapping. The data stays in the page cache
  /// (dirty until commit() flushes it); only the process's resident size
  /// shrinks. Does nothing when the file is not mapped.
  void releaseMapped(std::string_view name, uint64_t offset, uint64_t size);
  /// Asks the kernel to start writing bytes [offset, offset + size) of
  /// tensor `name`'s data to disk now, without waiting for it
  /// (sync_file_range), so that commit()'s fsync finds less to flush.
  /// Advisory: failures are ignored (commit() reports real ones).
  void startWriteback(std::string_view name, uint64_t offset, uint64_t size);

  /// Writes the whole tensor; `size` must be its byte size.
  Status writeTensor(std::string_view name, const void *data, size_t size);

  /// Makes the file durable under its final name (see the file comment).
  /// Fails, leaving no final file, when a write failed, when the data ends
  /// before the last tensor does, or when the system reports an error.
  Status commit();
  bool isCommitted() const { return committed_; }

private:
  SafetensorsWriter() = default;
  Error fail(std::string what, std::string hint) const;
  /// Checks a write of [offset, offset + size) into tensor `name` and gives
  /// its position in the file.
  Status locate(std::string_view name, uint64_t offset, size_t size,
                uint64_t &fileOffset) const;
  void removeTemporary();
  /// The directory calls resolve names in (AT_FDCWD without one), and the
  /// name to give them for the file `path` (its last component with one).
  int directoryFd() const;
  std::string nameInDirectory(const std::string &path) const;

  std::string path_;
  std::string temporaryPath_;
  FileDescriptor directory_; ///< see SafetensorsWriterOptions::directoryFd
  FileDescriptor file_;
  MemoryMap map_;
  SafetensorsHeader header_;
  uint64_t dataOffset_ = 0;
  uint64_t fileSize_ = 0;
  bool committed_ = false;
  std::atomic<bool> writeFailed_{false};
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_SAFETENSORSWRITER_H
