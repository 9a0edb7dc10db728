//===- SafetensorsWriter.cpp ----------------------------------------------===//
#include "aoa/runtime/storage/SafetensorsWriter.h"

#include "FileSystemSupport.h"
#include "aoa/runtime/storage/AtomicFile.h"
#include "aoa/runtime/support/FaultInjection.h"

#include "aoa/runtime/support/Messages.h"

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <numeric>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa::runtime {

namespace {

/// The official library sorts tensors by its Dtype enum (declared in
/// increasing alignment), largest first, then by name. These are that enum's
/// ordinals (safetensors/src/tensor.rs: BOOL, F4, F6_E2M3, F6_E3M2, U8, I8,
/// F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, I16, U16, F16, BF16,
/// I32, U32, F32, C64, F64, I64, U64); the sub-byte F4 and F6 take 1 to 3.
int officialDTypeRank(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return 0;
  case DType::U8:
    return 4;
  case DType::I8:
    return 5;
  case DType::F8E5M2:
    return 6;
  case DType::F8E4M3:
    return 7;
  case DType::F8E8M0:
    return 8;
  case DType::F8E4M3Fnuz:
    return 9;
  case DType::F8E5M2Fnuz:
    return 10;
  case DType::I16:
    return 11;
  case DType::U16:
    return 12;
  case DType::F16:
    return 13;
  case DType::BF16:
    return 14;
  case DType::I32:
    return 15;
  case DType::U32:
    return 16;
  case DType::F32:
    return 17;
  case DType::C64:
    return 18;
  case DType::F64:
    return 19;
  case DType::I64:
    return 20;
  case DType::U64:
    return 21;
  }
  return 0;
}

bool isValidUtf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

const char *const kDeclarationHint =
    "the plan declares the destination's tensors; recompile it, or check the "
    "destination layout";

/// Lays out the declared tensors in the official order; the first problem
/// found in a declaration is returned.
Expected<SafetensorsHeader> layoutTensors(const std::string &path,
                                          std::vector<TensorDeclaration> decls,
                                          SafetensorsMetadata metadata) {
  auto fail = [&](const std::string &what) -> Error {
    return {storageMessage(path, what), kDeclarationHint};
  };
  std::vector<size_t> order(decls.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    int rankA = officialDTypeRank(decls[a].dtype);
    int rankB = officialDTypeRank(decls[b].dtype);
    if (rankA != rankB)
      return rankA > rankB;
    return decls[a].name < decls[b].name;
  });

  SafetensorsHeader header;
  uint64_t offset = 0;
  for (size_t index : order) {
    TensorDeclaration &decl = decls[index];
    std::string tensor = "tensor " + quoteName(decl.name) + ": ";
    if (decl.name.empty())
      return fail("a tensor name is empty");
    if (decl.name == "__metadata__")
      return fail("a tensor cannot be called \"__metadata__\" (the header "
                  "keeps that key for metadata)");
    if (!isValidUtf8(decl.name))
      return fail(tensor + "the name is not valid UTF-8");
    uint64_t bytes = dtypeSize(decl.dtype);
    for (int64_t extent : decl.shape) {
      if (extent < 0)
        return fail(tensor + "shape " + formatExtents(decl.shape) +
                    " has a negative extent");
      if (extent != 0 && bytes > UINT64_MAX / uint64_t(extent))
        return fail(tensor + "shape " + formatExtents(decl.shape) +
                    " is too large to address");
      bytes *= uint64_t(extent);
    }
    if (bytes > UINT64_MAX - offset)
      return fail(tensor + "the file would be too large to address");
    SafetensorsTensor entry;
    entry.name = std::move(decl.name);
    entry.dtype = decl.dtype;
    entry.shape = std::move(decl.shape);
    entry.dataBegin = offset;
    entry.dataEnd = offset + bytes;
    offset += bytes;
    std::string name = entry.name;
    if (!header.addTensor(std::move(entry)))
      return fail("tensor " + quoteName(name) + " is declared twice");
  }

  std::vector<std::string_view> keys;
  for (const auto &[key, value] : metadata) {
    if (!isValidUtf8(key) || !isValidUtf8(value))
      return fail("metadata entry " + quoteName(key) + " is not valid UTF-8");
    keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  auto repeated = std::adjacent_find(keys.begin(), keys.end());
  if (repeated != keys.end())
    return fail("metadata key " + quoteName(*repeated) + " is given twice");
  header.setMetadata(std::move(metadata));
  return header;
}

} // namespace

Expected<SafetensorsWriter> SafetensorsWriter::create(
    std::string path, std::vector<TensorDeclaration> tensors,
    SafetensorsMetadata metadata, SafetensorsWriterOptions options) {
  SafetensorsWriter writer;
  writer.path_ = std::move(path);
  Expected<SafetensorsHeader> header =
      layoutTensors(writer.path_, std::move(tensors), std::move(metadata));
  if (!header)
    return header.error();
  writer.header_ = std::move(*header);
  std::string headerText = serializeSafetensorsHeader(writer.header_);
  writer.dataOffset_ = 8 + headerText.size();
  if (writer.header_.dataSize() > UINT64_MAX - writer.dataOffset_)
    return writer.fail("the file would be too large to address",
                       kDeclarationHint);
  writer.fileSize_ = writer.dataOffset_ + writer.header_.dataSize();

  auto [directory, fileName] = splitPath(writer.path_);
  if (fileName.empty())
    return writer.fail("the path names a directory, not a file",
                       "give the destination file's name");
  if (options.directoryFd >= 0) {
    writer.directory_ =
        FileDescriptor(::fcntl(options.directoryFd, F_DUPFD_CLOEXEC, 0));
    if (!writer.directory_.isOpen())
      return writer.fail("cannot duplicate the handle of " +
                             quoteName(directory) + ": " + errnoText(errno),
                         kSystemErrorHint);
  }
  // O_EXCL with a varying suffix: two writers never share a temporary, and
  // the file gets the usual permissions (mkstemp would force 0600).
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    char suffix[16];
    std::snprintf(suffix, sizeof(suffix), "%08x",
                  unsigned(temporarySuffix(attempt)));
    std::string candidate = directory + "/." + fileName + ".tmp." + suffix;
    // Read-write: a shared writable mapping (mapForWrites) needs it.
    fd = ::openat(writer.directoryFd(),
                  writer.nameInDirectory(candidate).c_str(),
                  O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      writer.temporaryPath_ = std::move(candidate);
    } else if (errno != EEXIST) {
      int error = errno;
      return writer.fail("cannot create the temporary file " +
                             quoteName(candidate) + ": " + errnoText(error),
                         createFailureHint(error));
    }
  }
  if (fd < 0)
    return writer.fail("cannot find an unused temporary file name in " +
                           quoteName(directory),
                       "remove stale .*.tmp.* files from the directory");
  writer.file_ = FileDescriptor(fd);

  bool reserved = false;
  if (options.reserveSpace && writer.fileSize_ > 0 &&
      !(reserved = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0,
                               static_cast<off_t>(writer.fileSize_)) == 0)) {
    int error = errno;
    // Only a real shortage is an error; file systems that cannot reserve
    // (EOPNOTSUPP and friends) are simply written without a reservation.
    if (error == ENOSPC || error == EDQUOT || error == EFBIG)
      return writer.fail("cannot reserve " + std::to_string(writer.fileSize_) +
                             " bytes: " + errnoText(error),
                         writeFailureHint(error));
  }

  // A mapping needs the file at its full length; the reservation above
  // guarantees its blocks. Without one, writes simply go through write().
  if (options.mapForWrites && reserved &&
      ::ftruncate(fd, static_cast<off_t>(writer.fileSize_)) == 0)
    (void)writer.map_.mapWritable(fd, size_t(writer.fileSize_));

  std::string prefix =
      encodeSafetensorsHeaderLength(headerText.size()) + headerText;
  TransferResult written = writeAt(fd, prefix.data(), prefix.size(), 0);
  if (written.error)
    return writer.fail("writing the header to " +
                           quoteName(writer.temporaryPath_) +
                           " failed: " + errnoText(written.error),
                       writeFailureHint(written.error));
  return writer;
}

SafetensorsWriter::SafetensorsWriter(SafetensorsWriter &&other) noexcept
    : path_(std::move(other.path_)),
      temporaryPath_(std::exchange(other.temporaryPath_, std::string())),
      directory_(std::move(other.directory_)), file_(std::move(other.file_)),
      map_(std::move(other.map_)), header_(std::move(other.header_)),
      dataOffset_(other.dataOffset_), fileSize_(other.fileSize_),
      committed_(other.committed_), writeFailed_(other.writeFailed_.load()) {}

SafetensorsWriter::~SafetensorsWriter() { removeTemporary(); }

void SafetensorsWriter::removeTemporary() {
  if (committed_ || temporaryPath_.empty())
    return;
  map_ = MemoryMap();
  file_.close();
  ::unlinkat(directoryFd(), nameInDirectory(temporaryPath_).c_str(), 0);
  temporaryPath_.clear();
}

int SafetensorsWriter::directoryFd() const {
  return directory_.isOpen() ? directory_.get() : AT_FDCWD;
}

std::string SafetensorsWriter::nameInDirectory(const std::string &path) const {
  return directory_.isOpen() ? splitPath(path).second : path;
}

Error SafetensorsWriter::fail(std::string what, std::string hint) const {
  return {storageMessage(path_, what), std::move(hint)};
}

Status SafetensorsWriter::locate(std::string_view name, uint64_t offset,
                                 size_t size, uint64_t &fileOffset) const {
  // Built only on failure: writes of many small runs are on the hot path.
  auto tensorText = [&] { return "tensor " + quoteName(name) + ": "; };
  if (committed_)
    return fail(tensorText() + "cannot write after the file was committed",
                "write all data before commit()");
  if (!file_.isOpen())
    return fail(tensorText() + "cannot write after a failed commit",
                "create a new writer and write the data again");
  const SafetensorsTensor *tensor = header_.find(name);
  if (!tensor)
    return fail(tensorText() + "no such tensor was declared",
                "declare every tensor when creating the writer");
  if (offset > tensor->byteSize() || size > tensor->byteSize() - offset)
    return fail(tensorText() + "cannot write bytes " +
                    formatByteRange(offset, offset + size) +
                    ": the tensor holds " + std::to_string(tensor->byteSize()) +
                    " bytes",
                kDeclarationHint);
  fileOffset = dataOffset_ + tensor->dataBegin + offset;
  return Status();
}

Status SafetensorsWriter::write(std::string_view name, uint64_t offset,
                                const void *data, size_t size) {
  uint64_t fileOffset = 0;
  if (Status located = locate(name, offset, size, fileOffset); !located)
    return located;
  TransferResult written = writeAt(file_.get(), data, size, fileOffset);
  if (written.error) {
    writeFailed_ = true;
    return fail("tensor " + quoteName(name) + ": writing bytes " +
                    formatByteRange(offset, offset + size) + " to " +
                    quoteName(temporaryPath_) +
                    " failed: " + errnoText(written.error),
                writeFailureHint(written.error));
  }
  return Status();
}

Status SafetensorsWriter::copyFromFile(std::string_view name, uint64_t offset,
                                       int sourceFd, uint64_t sourceOffset,
                                       size_t size) {
  uint64_t fileOffset = 0;
  if (Status located = locate(name, offset, size, fileOffset); !located)
    return located;
  TransferResult copied =
      copyAt(sourceFd, sourceOffset, file_.get(), fileOffset, size);
  if (copied.error || copied.bytes != size) {
    writeFailed_ = true;
    std::string what = "tensor " + quoteName(name) + ": copying bytes " +
                       formatByteRange(offset, offset + size) + " to " +
                       quoteName(temporaryPath_);
    if (copied.error)
      return fail(what + " failed: " + errnoText(copied.error),
                  writeFailureHint(copied.error));
    return fail(what + " failed: the source file ended after " +
                    std::to_string(copied.bytes) + " bytes",
                "another process truncated or rewrote the source file; make "
                "sure nothing writes the source checkpoint during a run");
  }
  return Status();
}

Status SafetensorsWriter::writeMapped(std::string_view name, uint64_t offset,
                                      const void *data, size_t size) {
  if (!isMapped())
    return write(name, offset, data, size);
  uint64_t fileOffset = 0;
  if (Status located = locate(name, offset, size, fileOffset); !located)
    return located;
  std::memcpy(map_.writableData() + fileOffset, data, size);
  return Status();
}

void SafetensorsWriter::releaseMapped(std::string_view name, uint64_t offset,
                                      uint64_t size) {
  uint64_t fileOffset = 0;
  if (isMapped() && locate(name, offset, size, fileOffset).ok())
    map_.release(size_t(fileOffset), size_t(size));
}

void SafetensorsWriter::startWriteback(std::string_view name, uint64_t offset,
                                       uint64_t size) {
  uint64_t fileOffset = 0;
  if (locate(name, offset, size, fileOffset).ok())
    (void)::sync_file_range(file_.get(), off_t(fileOffset), off_t(size),
                            SYNC_FILE_RANGE_WRITE);
}

Status SafetensorsWriter::writeTensor(std::string_view name, const void *data,
                                      size_t size) {
  const SafetensorsTensor *tensor = header_.find(name);
  if (tensor && size != tensor->byteSize())
    return fail("tensor " + quoteName(name) + ": " + std::to_string(size) +
                    " bytes given for its " +
                    std::to_string(tensor->byteSize()),
                kDeclarationHint);
  return write(name, 0, data, size);
}

Status SafetensorsWriter::commit() {
  if (committed_)
    return fail("the file was already committed", "commit a writer once");
  if (!file_.isOpen())
    return fail("the file cannot be committed after a failed commit",
                "create a new writer and write the data again");
  if (writeFailed_)
    return fail("an earlier write failed, so the file is incomplete and is "
                "not committed",
                "fix the cause of the write error and run again");
  // Stores through the mapping are in the page cache; fsync below flushes
  // them like written data.
  map_ = MemoryMap();
  struct stat status;
  if (::fstat(file_.get(), &status) != 0)
    return fail("cannot stat " + quoteName(temporaryPath_) + ": " +
                    errnoText(errno),
                kSystemErrorHint);
  uint64_t size = static_cast<uint64_t>(status.st_size);
  if (size < fileSize_) {
    // The data stops early: name the first tensor that is cut short.
    uint64_t written = size > dataOffset_ ? size - dataOffset_ : 0;
    const SafetensorsTensor *cut = nullptr;
    for (const SafetensorsTensor &tensor : header_.tensors())
      if (tensor.dataEnd > written && tensor.byteSize() != 0) {
        cut = &tensor;
        break;
      }
    std::string what =
        cut ? "tensor " + quoteName(cut->name) + " is incomplete: " : "";
    return fail(what + "the data written ends at byte " + std::to_string(size) +
                    " of " + std::to_string(fileSize_),
                "write every tensor's data before commit()");
  }
  auto failSystem = [&](const std::string &what, int error) {
    return fail(what + ": " + errnoText(error), writeFailureHint(error));
  };
  if (injectedFault(FaultPoint::Fsync) || ::fsync(file_.get()) != 0) {
    // The kernel may have dropped the unwritten pages: a second fsync could
    // succeed on lost data, so the file can never be committed now.
    int error = errno;
    writeFailed_ = true;
    return failSystem(
        "flushing " + quoteName(temporaryPath_) + " to disk failed", error);
  }
  if (int error = file_.close())
    return failSystem("closing " + quoteName(temporaryPath_) + " failed",
                      error);
  if (injectedFault(FaultPoint::Rename) ||
      ::renameat(directoryFd(), nameInDirectory(temporaryPath_).c_str(),
                 directoryFd(), nameInDirectory(path_).c_str()) != 0)
    return failSystem("renaming " + quoteName(temporaryPath_) +
                          " to the final name failed",
                      errno);
  committed_ = true;
  temporaryPath_.clear();

  // The rename is durable only once the directory is.
  Status synced = directory_.isOpen()
                      ? syncDirectory(directory_.get(), splitPath(path_).first)
                      : syncDirectory(splitPath(path_).first);
  if (!synced.ok())
    return fail("the file is in place, but " + synced.error().message,
                synced.error().hint);
  return Status();
}

} // namespace aoa::runtime
