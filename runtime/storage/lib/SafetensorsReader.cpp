//===- SafetensorsReader.cpp ----------------------------------------------===//
#include "aoa/runtime/storage/SafetensorsReader.h"

#include "aoa/runtime/support/ContentHash.h"

#include "aoa/runtime/support/Messages.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>

namespace aoa::runtime {

namespace {

const char *const kNotSafetensorsHint =
    "a safetensors file starts with an 8-byte little-endian header length "
    "followed by a JSON header; this file is truncated, corrupt, or of "
    "another format";

const char *const kPlanMismatchHint =
    "the plan does not match this file; recompile it against the "
    "checkpoint's current metadata";

/// The hint for a failed open, by cause.
std::string openHint(int errnoValue) {
  switch (errnoValue) {
  case ENOENT:
    return "check the path and the --src-dir the plan was run with";
  case EACCES:
  case EPERM:
    return "the file is not readable by this user; check its permissions";
  case EISDIR:
    return "the path names a directory, not a safetensors file";
  default:
    return kSystemErrorHint;
  }
}

} // namespace

Expected<SafetensorsReader>
SafetensorsReader::open(std::string path) {
  SafetensorsReader reader;
  reader.path_ = std::move(path);
  const std::string &file = reader.path_;
  auto fail = [&](const std::string &what, std::string hint) -> Error {
    return {storageMessage(file, what), std::move(hint)};
  };

  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return fail("cannot open: " + errnoText(error), openHint(error));
  }
  reader.file_ = FileDescriptor(fd);
  struct stat status;
  if (::fstat(fd, &status) != 0)
    return fail("cannot stat: " + errnoText(errno), kSystemErrorHint);
  if (S_ISDIR(status.st_mode))
    return fail("cannot open: " + errnoText(EISDIR), openHint(EISDIR));
  reader.fileSize_ = static_cast<uint64_t>(status.st_size);

  uint64_t fileSize = reader.fileSize_;
  if (fileSize < 8)
    return fail("the file holds " + std::to_string(fileSize) +
                    " bytes, too few for a safetensors header length",
                kNotSafetensorsHint);
  unsigned char lengthBytes[8];
  TransferResult read = readAt(fd, lengthBytes, 8, 0);
  if (read.error)
    return fail("cannot read the header length: " + errnoText(read.error),
                kSystemErrorHint);
  if (read.bytes != 8)
    return fail("the file became shorter while it was opened",
                kSystemErrorHint);
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | lengthBytes[i];
  if (headerSize > kMaxSafetensorsHeaderSize)
    return fail("header length " + std::to_string(headerSize) +
                    " is larger than the " +
                    std::to_string(kMaxSafetensorsHeaderSize) +
                    "-byte limit for safetensors headers",
                kNotSafetensorsHint);
  if (headerSize > fileSize - 8)
    return fail("header length " + std::to_string(headerSize) +
                    " runs past the end of the file (" +
                    std::to_string(fileSize) + " bytes)",
                kNotSafetensorsHint);

  std::string json(headerSize, '\0');
  read = readAt(fd, json.data(), headerSize, 8);
  if (read.error)
    return fail("cannot read the header: " + errnoText(read.error),
                kSystemErrorHint);
  if (read.bytes != headerSize)
    return fail("the file became shorter while it was opened",
                kSystemErrorHint);
  reader.dataOffset_ = 8 + headerSize;
  Expected<SafetensorsHeader> header =
      parseSafetensorsHeader(json, fileSize - reader.dataOffset_, file);
  if (!header)
    return header.error();
  reader.header_ = std::move(*header);

  return reader;
}

Error SafetensorsReader::failTensor(const SafetensorsTensor &tensor,
                                    std::string what, std::string hint) const {
  return {
      storageMessage(path_, "tensor " + quoteName(tensor.name) + ": " + what),
      std::move(hint)};
}

Status SafetensorsReader::readBytes(const SafetensorsTensor &tensor,
                                    uint64_t offset, void *buffer,
                                    size_t size) const {
  // The header was validated against the file, but `tensor` may come from
  // elsewhere: never read outside this file's data section.
  if (tensor.dataBegin > tensor.dataEnd ||
      tensor.dataEnd > fileSize_ - dataOffset_)
    return failTensor(tensor, "the tensor's data lies outside this file",
                      "pass a tensor entry of this reader's header");
  if (offset > tensor.byteSize() || size > tensor.byteSize() - offset)
    return failTensor(tensor,
                      "cannot read bytes " +
                          formatByteRange(offset, offset + size) +
                          ": the tensor holds " +
                          std::to_string(tensor.byteSize()) + " bytes",
                      kPlanMismatchHint);
  if (size == 0)
    return Status();
  uint64_t position = dataOffset_ + tensor.dataBegin + offset;
  TransferResult read = readAt(file_.get(), buffer, size, position);
  std::string range = "bytes " + formatByteRange(offset, offset + size);
  if (read.error)
    return failTensor(tensor,
                      "reading " + range + " failed: " + errnoText(read.error),
                      kSystemErrorHint);
  if (read.bytes != size)
    return failTensor(tensor,
                      "the file ended while reading " + range +
                          " (it was shortened after it was opened)",
                      "another process truncated or rewrote the file; make "
                      "sure nothing writes the source checkpoint during a "
                      "run");
  return Status();
}

Status SafetensorsReader::readElements(const SafetensorsTensor &tensor,
                                       uint64_t first, uint64_t count,
                                       void *buffer) const {
  uint64_t elementSize = dtypeSize(tensor.dtype);
  uint64_t elements = tensor.byteSize() / elementSize;
  if (first > elements || count > elements - first)
    return failTensor(tensor,
                      "cannot read elements " +
                          formatByteRange(first, first + count) +
                          ": the tensor holds " + std::to_string(elements),
                      kPlanMismatchHint);
  return readBytes(tensor, first * elementSize, buffer,
                   static_cast<size_t>(count * elementSize));
}

Status SafetensorsReader::readTensor(const SafetensorsTensor &tensor,
                                     void *buffer, size_t bufferSize) const {
  if (bufferSize < tensor.byteSize())
    return failTensor(tensor,
                      "a buffer of " + std::to_string(bufferSize) +
                          " bytes cannot hold its " +
                          std::to_string(tensor.byteSize()) + " bytes",
                      "allocate the buffer from the tensor's byte size");
  return readBytes(tensor, 0, buffer, static_cast<size_t>(tensor.byteSize()));
}

Expected<uint64_t>
SafetensorsReader::contentHash(const SafetensorsTensor &tensor) const {
  constexpr uint64_t kChunkBytes = 8 << 20;
  ContentHasher hasher;
  std::vector<uint8_t> chunk(
      size_t(std::min<uint64_t>(tensor.byteSize(), kChunkBytes)));
  for (uint64_t offset = 0; offset < tensor.byteSize();) {
    size_t size =
        size_t(std::min<uint64_t>(tensor.byteSize() - offset, kChunkBytes));
    if (Status read = readBytes(tensor, offset, chunk.data(), size); !read.ok())
      return read.error();
    hasher.update(chunk.data(), size);
    offset += size;
  }
  return hasher.digest();
}

} // namespace aoa::runtime
