//===- DestinationFiles.cpp - Writing and finishing destination files -----===//
//
// DestinationFiles (see DestinationFiles.h) while the plan runs: writing
// regions into the staged files, hashing them in order, finishing each file,
// cleaning up after a failure, and verifying the result. Opening is in
// DestinationFilesOpen.cpp and DestinationFilesExisting.cpp; installing the
// finished files and the metadata in DestinationFilesInstall.cpp.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/DestinationFiles.h"

#include "DestinationDirectory.h"
#include "DestinationFileState.h"
#include "FileSystemSupport.h"
#include "RunJournal.h"
#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/ir/HuggingFaceIndex.h"
#include "aoa/runtime/storage/AtomicFile.h"
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/storage/SourceFiles.h"
#include "aoa/runtime/storage/StoredRegion.h"
#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/support/FaultInjection.h"
#include "aoa/runtime/support/FileDescriptor.h"
#include "aoa/runtime/support/Messages.h"
#include "aoa/runtime/support/ThreadPool.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <sstream>
#include <unistd.h>

namespace aoa::runtime {

namespace {

/// A failure to walk a region of destination tensor `name` in file `path`.
Error regionError(const std::string &path, const std::string &name,
                  const Error &error) {
  return Error{"'" + path + "': tensor '" + name + "': " + error.message,
               error.hint};
}

constexpr size_t kHashChunkBytes = 8 << 20;
/// Runs shorter than this on average go through the file's mapping.
constexpr uint64_t kShortRunBytes = 64 << 10;
/// Regions at least this large are sent to the disk as soon as they are
/// written, so that the disk works while the run computes and the commit's
/// fsync waits less.
constexpr uint64_t kWritebackBytes = 8 << 20;

/// Hashes bytes [offset, offset + size) of the open file `fd`.
Expected<uint64_t> hashFileRange(int fd, uint64_t offset, uint64_t size,
                                 const std::string &path) {
  ContentHasher hasher;
  std::unique_ptr<uint8_t[]> chunk(
      new uint8_t[std::min<uint64_t>(std::max<uint64_t>(size, 1),
                                     kHashChunkBytes)]);
  while (size > 0) {
    size_t n = size_t(std::min<uint64_t>(size, kHashChunkBytes));
    TransferResult read = readAt(fd, chunk.get(), n, offset);
    if (read.error || read.bytes != n)
      return Error{"reading back " + quoteName(path) + " failed: " +
                       (read.error ? errnoText(read.error)
                                   : std::string("the file is shorter than "
                                                 "what was written")),
                   kSystemErrorHint};
    hasher.update(chunk.get(), n);
    offset += n;
    size -= n;
  }
  return hasher.digest();
}

} // namespace

DestinationFiles::DestinationFiles(const plan::Plan &plan) : plan_(plan) {}
DestinationFiles::~DestinationFiles() = default;

std::string DestinationFiles::stagedPath(uint32_t file) const {
  return stagingDirectory_ + "/files/" + plan_.destinationFiles[file].path;
}

bool DestinationFiles::writesHuggingFaceIndex() const {
  // Hugging Face writes an index only for a model split over several files.
  return plan_.destinationFormat == plan::DestinationFormat::HuggingFace &&
         plan_.destinationFiles.size() > 1;
}

std::string DestinationFiles::finalPath(uint32_t file) const {
  return directory_ + "/" + plan_.destinationFiles[file].path;
}

Expected<FileDescriptor> DestinationFiles::stagedDirectory(uint32_t file,
                                                           bool create) const {
  Expected<FileDescriptor> files =
      openDirectoryBeneath(staging_.get(), stagingDirectory_, "files", create);
  if (!files.ok() || !files->isOpen())
    return files;
  return openParentBeneath(files->get(), stagingDirectory_ + "/files",
                           plan_.destinationFiles[file].path, create);
}

Expected<FileDescriptor> DestinationFiles::finalDirectory(uint32_t file,
                                                          bool create) const {
  return openParentBeneath(root_.get(), directory_,
                           plan_.destinationFiles[file].path, create);
}

std::vector<bool> DestinationFiles::finishedFiles() const {
  std::vector<bool> finished(files_.size());
  for (size_t f = 0; f < files_.size(); ++f)
    finished[f] = files_[f]->finished;
  return finished;
}

Status DestinationFiles::openWriter(uint32_t fileId) {
  FileState &file = *files_[fileId];
  std::vector<TensorDeclaration> declarations;
  for (uint32_t t : file.tensors) {
    const plan::StoredTensor &stored = plan_.destinationTensors[t];
    declarations.push_back({stored.name, stored.dtype, stored.storedShape()});
  }
  std::string staged = stagedPath(fileId);
  Expected<FileDescriptor> directory = stagedDirectory(fileId, true);
  if (!directory.ok())
    return directory.error();
  SafetensorsWriterOptions writerOptions;
  writerOptions.directoryFd = directory->get();
  writerOptions.mapForWrites = true; // for strided regions (writeRegion)
  // transformers refuses safetensors files without a known "format".
  SafetensorsMetadata metadata;
  if (plan_.destinationFormat == plan::DestinationFormat::HuggingFace)
    metadata.emplace_back("format", "pt");
  Expected<SafetensorsWriter> created = SafetensorsWriter::create(
      staged, std::move(declarations), std::move(metadata), writerOptions);
  if (!created.ok())
    return created.error();
  file.writer.emplace(std::move(*created));
  file.progress.reset(new TensorProgress[file.tensors.size()]);
  return Status();
}

Expected<SafetensorsWriter *> DestinationFiles::writerFor(uint32_t tensorId,
                                                         const Box &region) {
  const plan::StoredTensor &tensor = plan_.destinationTensors[tensorId];
  FileState &file = *files_[tensor.file];
  std::lock_guard<std::mutex> lock(file.mutex);
  if (file.finished)
    return Error{"'" + plan_.destinationFiles[tensor.file].path +
                     "' is written after it was complete (" + tensor.key +
                     region.toString() + ")",
                 "the plan writes some elements twice; recompile it"};
  if (!file.writer)
    if (Status opened = openWriter(tensor.file); !opened.ok())
      return opened.error();
  return &*file.writer;
}

void DestinationFiles::hashInOrder(uint32_t tensorId, uint64_t offset,
                                   const void *data, uint64_t size) {
  // The file is unfinished while this write is uncounted, so its progress
  // array (created with the writer) stays.
  FileState &file = *files_[plan_.destinationTensors[tensorId].file];
  TensorProgress &progress = file.progress[positionInFile_[tensorId]];
  std::lock_guard<std::mutex> lock(progress.mutex);
  if (progress.hashedBytes != offset)
    return;
  if (!progress.hasher)
    progress.hasher = std::make_unique<ContentHasher>();
  progress.hasher->update(data, size);
  progress.hashedBytes += size;
}

Status DestinationFiles::countWritten(uint32_t tensorId, uint64_t bytes) {
  uint32_t fileId = plan_.destinationTensors[tensorId].file;
  bytesWritten_ += bytes;
  if (files_[fileId]->remainingBytes.fetch_sub(int64_t(bytes)) ==
      int64_t(bytes))
    return finishFile(fileId);
  return Status();
}

Status DestinationFiles::writeRegion(uint32_t tensorId, const Box &region,
                                     const void *data) {
  const plan::StoredTensor &tensor = plan_.destinationTensors[tensorId];
  const std::string &path = plan_.destinationFiles[tensor.file].path;
  Expected<SafetensorsWriter *> opened = writerFor(tensorId, region);
  if (!opened.ok())
    return opened.error();
  SafetensorsWriter *writer = *opened;

  size_t elementSize = dtypeSize(tensor.dtype);
  auto bytes = static_cast<const uint8_t *>(data);
  uint64_t regionBytes = uint64_t(region.volume()) * elementSize;
  // Many short runs (a column strip of a row-major tensor) are stored
  // through the file's mapping: a copy each instead of a system call each.
  int64_t runCount = storedRunCount(tensor.box, region);
  bool shortRuns = runCount > 1 && regionBytes / uint64_t(runCount) < kShortRunBytes;
  Status status;
  int64_t runs = 0;
  uint64_t firstByte = 0, endByte = 0;
  Status walk = forEachStoredRun(
      tensor.box, tensor.flat, region, [&](const StoredRun &run) {
        if (runs++ == 0)
          firstByte = uint64_t(run.storedOffset) * elementSize;
        uint64_t offset = uint64_t(run.storedOffset) * elementSize;
        const uint8_t *from = bytes + size_t(run.regionOffset) * elementSize;
        size_t size = size_t(run.count) * elementSize;
        endByte = offset + size; // runs come in increasing order
        status = shortRuns ? writer->writeMapped(tensor.name, offset, from, size)
                           : writer->write(tensor.name, offset, from, size);
        return status.ok();
      });
  if (!walk.ok())
    return regionError(path, tensor.name, walk.error());
  if (!status.ok())
    return status;
  if (shortRuns)
    writer->releaseMapped(tensor.name, firstByte, endByte - firstByte);
  if (runs == 1) // contiguous: hashed now if it continues the hashed prefix
    hashInOrder(tensorId, firstByte, data, regionBytes);
  if (regionBytes >= kWritebackBytes)
    writer->startWriteback(tensor.name, firstByte, endByte - firstByte);
  return countWritten(tensorId, regionBytes);
}

Status DestinationFiles::writeRegionFromFile(
    uint32_t tensorId, const Box &region,
    const std::vector<SourceRun> &sourceRuns) {
  const plan::StoredTensor &tensor = plan_.destinationTensors[tensorId];
  const std::string &path = plan_.destinationFiles[tensor.file].path;
  uint64_t elementSize = dtypeSize(tensor.dtype);
  uint64_t regionBytes = uint64_t(region.volume()) * elementSize;
  uint64_t sourceBytes = 0;
  for (const SourceRun &run : sourceRuns)
    sourceBytes += run.size;
  if (sourceBytes != regionBytes)
    return Error{"'" + path + "': tensor '" + tensor.name + "': " +
                     tensor.key + region.toString() + " holds " +
                     std::to_string(regionBytes) + " bytes, but " +
                     std::to_string(sourceBytes) + " are copied into it",
                 "this is a bug in aoa-run; please report it"};
  Expected<SafetensorsWriter *> writer = writerFor(tensorId, region);
  if (!writer.ok())
    return writer.error();
  // Both lists of runs tile the region's bytes in order: copy where they
  // overlap.
  size_t next = 0;
  uint64_t usedOfNext = 0, firstByte = 0, endByte = 0;
  Status status;
  Status walk = forEachStoredRun(
      tensor.box, tensor.flat, region, [&](const StoredRun &run) {
        uint64_t offset = uint64_t(run.storedOffset) * elementSize;
        uint64_t size = uint64_t(run.count) * elementSize;
        if (endByte == 0)
          firstByte = offset;
        endByte = offset + size; // runs come in increasing order
        while (size > 0) {
          const SourceRun &from = sourceRuns[next];
          uint64_t piece = std::min(size, from.size - usedOfNext);
          status = (*writer)->copyFromFile(tensor.name, offset, from.fd,
                                           from.fileOffset + usedOfNext,
                                           size_t(piece));
          if (!status.ok())
            return false;
          offset += piece;
          size -= piece;
          usedOfNext += piece;
          if (usedOfNext == from.size) {
            ++next;
            usedOfNext = 0;
          }
        }
        return true;
      });
  if (!walk.ok())
    return regionError(path, tensor.name, walk.error());
  if (!status.ok())
    return status;
  if (regionBytes >= kWritebackBytes)
    (*writer)->startWriteback(tensor.name, firstByte, endByte - firstByte);
  return countWritten(tensorId, regionBytes);
}

Status DestinationFiles::finishFile(uint32_t fileId) {
  FileState &file = *files_[fileId];
  std::lock_guard<std::mutex> lock(file.mutex);
  if (file.finished)
    return Status();
  SafetensorsWriter &writer = *file.writer;
  uint64_t dataOffset = writer.fileSize() - writer.header().dataSize();
  std::vector<uint64_t> hashes;
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    const plan::StoredTensor &tensor =
        plan_.destinationTensors[file.tensors[i]];
    const SafetensorsTensor *entry = writer.header().find(tensor.name);
    TensorProgress &progress = file.progress[i];
    if (progress.hashedBytes == entry->byteSize()) {
      hashes.push_back(progress.hasher ? progress.hasher->digest()
                                       : contentHash(nullptr, 0));
      continue;
    }
    Expected<uint64_t> hash =
        hashFileRange(writer.fileDescriptor(), dataOffset + entry->dataBegin,
                      entry->byteSize(), writer.temporaryPath());
    if (!hash.ok())
      return hash.error();
    hashes.push_back(*hash);
  }
  if (Status committed = writer.commit(); !committed.ok())
    return committed;
  FinishedFile record;
  record.file = fileId;
  record.size = writer.fileSize();
  record.tensorHashes = hashes;
  if (Status recorded = journal_->record(record); !recorded.ok())
    return recorded;
  file.fileSize = record.size;
  file.tensorHashes = std::move(hashes);
  file.writer.reset();
  file.progress.reset();
  file.finished = true;
  if (uint32_t finished = ++filesFinished_;
      stopAfterFiles_ && finished >= stopAfterFiles_)
    return Error{"stopped after " + std::to_string(finished) +
                     " finished files, as --stop-after-files asked",
                 "run the same command without it to resume"};
  return Status();
}

Status DestinationFiles::finishEmptyFiles() {
  for (uint32_t f = 0; f < files_.size(); ++f) {
    FileState &file = *files_[f];
    if (!owns(f) || file.finished || file.dataBytes != 0)
      continue;
    if (file.tensors.empty())
      return Error{"destination file '" + plan_.destinationFiles[f].path +
                       "' holds no tensors",
                   "the plan is inconsistent; recompile it"};
    {
      std::lock_guard<std::mutex> lock(file.mutex);
      if (Status opened = openWriter(f); !opened.ok())
        return opened;
    }
    if (Status status = finishFile(f); !status.ok())
      return status;
  }
  return Status();
}

void DestinationFiles::cleanUpAfterFailure() {
  if (anyFileFinished())
    return;
  releaseUnfinishedFiles();
  removeStagingDirectory(directory_, createdDirectory_);
}

bool DestinationFiles::anyFileFinished() const {
  for (const auto &file : files_)
    if (file->finished)
      return true;
  return false;
}

void DestinationFiles::releaseUnfinishedFiles() {
  // Unfinished writers remove their temporaries when destroyed.
  for (const auto &file : files_) {
    std::lock_guard<std::mutex> lock(file->mutex);
    file->writer.reset();
  }
  journal_.reset();
}

void DestinationFiles::removeStagingDirectory(
    const std::string &destinationDirectory, bool removeDestination) {
  std::string directory = withoutTrailingSlashes(destinationDirectory);
  Expected<FileDescriptor> root = openDirectory(directory);
  if (!root.ok())
    return;
  (void)removeTree(root->get(), directory, kStagingDirectoryName);
  if (removeDestination)
    ::rmdir(directory.c_str()); // only when empty
}

Status DestinationFiles::verify(ThreadPool &pool) const {
  return pool.parallelFor(files_.size(), [&](size_t f) -> Status {
    if (!owns(uint32_t(f)))
      return Status();
    const FileState &file = *files_[f];
    std::string path = finalPath(uint32_t(f));
    {
      // Drop the cached pages (clean after the commit's fsync) so the bytes
      // are read from the disk, not from memory.
      FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (fd.isOpen())
        (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
    }
    Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
    if (!reader.ok())
      return reader.error();
    for (size_t i = 0; i < file.tensors.size(); ++i) {
      const plan::StoredTensor &tensor =
          plan_.destinationTensors[file.tensors[i]];
      const SafetensorsTensor *entry = reader->find(tensor.name);
      if (!entry || entry->dtype != tensor.dtype ||
          entry->shape != tensor.storedShape())
        return Error{quoteName(path) + ": tensor '" + tensor.name +
                         "' is missing or has another dtype or shape than "
                         "was written",
                     "the file changed after it was written; run again "
                     "with --restart"};
      Expected<uint64_t> hash = reader->contentHash(*entry);
      if (!hash.ok())
        return hash.error();
      if (*hash != file.tensorHashes[i])
        return Error{quoteName(path) + ": tensor '" + tensor.name + "' (" +
                         tensor.key + tensor.box.toString() +
                         ") reads back with xxh3 " + formatContentHash(*hash) +
                         ", " +
                         formatContentHash(file.tensorHashes[i]) +
                         " was written",
                     "the data was corrupted on its way to the disk (or "
                     "changed since); check the disk, then run again with "
                     "--restart"};
    }
    return Status();
  });
}

} // namespace aoa::runtime
