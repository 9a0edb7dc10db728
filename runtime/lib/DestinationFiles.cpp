//===- DestinationFiles.cpp -----------------------------------------------===//
#include "aoa/runtime/DestinationFiles.h"

#include "Messages.h"
#include "aoa/ir/HuggingFaceIndex.h"
#include "aoa/ir/MetadataWriter.h"
#include "aoa/runtime/AtomicFile.h"
#include "aoa/runtime/ContentHash.h"
#include "aoa/runtime/FaultInjection.h"
#include "aoa/runtime/FileDescriptor.h"
#include "aoa/runtime/RunJournal.h"
#include "aoa/runtime/SafetensorsReader.h"
#include "aoa/runtime/SafetensorsWriter.h"
#include "aoa/runtime/StoredRegion.h"
#include "aoa/runtime/ThreadPool.h"

#include "llvm/ADT/StringMap.h"

#include <fcntl.h>
#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace aoa::runtime {

namespace {

constexpr size_t kHashChunkBytes = 8 << 20;
/// Runs shorter than this on average go through the file's mapping.
constexpr uint64_t kShortRunBytes = 64 << 10;

/// Hashing state of one tensor while its file is written.
struct TensorProgress {
  std::mutex mutex;
  std::unique_ptr<ContentHasher> hasher; ///< created by the first write
  uint64_t hashedBytes = 0;              ///< a prefix of the tensor's bytes
};

Error fileSystemError(const std::string &what, const std::error_code &error) {
  return Error{what + ": " + error.message(), kSystemErrorHint};
}

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

/// The identity of an existing file, for "is this a source file?".
std::optional<std::pair<dev_t, ino_t>> fileIdentity(const std::string &path) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0)
    return std::nullopt;
  return std::make_pair(status.st_dev, status.st_ino);
}

} // namespace

struct DestinationFiles::FileState {
  std::mutex mutex;
  std::vector<uint32_t> tensors; ///< destination tensor ids, in plan order
  uint64_t dataBytes = 0;
  std::atomic<int64_t> remainingBytes{0};
  std::optional<SafetensorsWriter> writer;
  std::unique_ptr<TensorProgress[]> progress;
  std::atomic<bool> finished{false};
  uint64_t fileSize = 0;               ///< once finished
  std::vector<uint64_t> tensorHashes;  ///< once finished
};

DestinationFiles::DestinationFiles(const plan::Plan &plan) : plan_(plan) {}
DestinationFiles::~DestinationFiles() = default;

std::string DestinationFiles::stagedPath(uint32_t file) const {
  return stagingDirectory_ + "/files/" + plan_.destinationFiles[file].path;
}

std::string DestinationFiles::finalPath(uint32_t file) const {
  return directory_ + "/" + plan_.destinationFiles[file].path;
}

namespace {

/// `path` without trailing slashes ("/" stays).
std::string withoutTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

/// True when every tensor of the finished `record` in the safetensors file
/// at `path` still has the hash the journal recorded.
bool matchesRecord(const std::string &path, const FinishedFile &record,
                   const plan::Plan &plan,
                   const std::vector<uint32_t> &tensors) {
  Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
  if (!reader.ok() || reader->fileSize() != record.size)
    return false;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsTensor *entry =
        reader->find(plan.destinationTensors[tensors[i]].name);
    if (!entry)
      return false;
    Expected<uint64_t> hash = reader->contentHash(*entry);
    if (!hash.ok() || *hash != record.tensorHashes[i])
      return false;
  }
  return true;
}

} // namespace

namespace {

/// The run journals in `stagingDirectory`: "journal" (the local backend's)
/// and "journal.RANK" (the mpi backend's), sorted.
std::vector<std::string> journalPaths(const std::string &stagingDirectory) {
  std::vector<std::string> paths;
  std::error_code error;
  for (auto it = fs::directory_iterator(stagingDirectory, error);
       !error && it != fs::directory_iterator(); it.increment(error)) {
    std::string name = it->path().filename().string();
    bool rankJournal = name.size() > 8 && name.compare(0, 8, "journal.") == 0 &&
                       name.find_first_not_of("0123456789", 8) ==
                           std::string::npos;
    if (name == "journal" || rankJournal)
      paths.push_back(it->path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// Hugging Face writes an index only for a model split over several files.
bool writesHuggingFaceIndex(const plan::Plan &plan) {
  return plan.destinationFormat == plan::DestinationFormat::HuggingFace &&
         plan.destinationFiles.size() > 1;
}

} // namespace

Expected<bool>
DestinationFiles::prepareDirectory(const std::string &destinationDirectory,
                                   const std::string &sourceDirectory,
                                   const DestinationOptions &options) {
  std::string directory = withoutTrailingSlashes(destinationDirectory);
  std::string stagingDirectory = directory + "/.aoa-run";
  std::error_code error;
  bool created = !fs::exists(directory, error);
  fs::create_directories(directory, error);
  if (error)
    return fileSystemError("cannot create the destination directory " +
                               quoteName(directory),
                           error);
  // Checks that refuse the run leave the destination as it was.
  auto refuse = [&](Error refusal) -> Error {
    std::error_code ignored;
    if (created)
      fs::remove_all(directory, ignored);
    return refusal;
  };
  if (fs::equivalent(directory, sourceDirectory, error))
    return refuse(Error{"the destination directory " + quoteName(directory) +
                            " is the source directory",
                        "write the converted checkpoint to another "
                        "directory; aoa-run never modifies a source "
                        "checkpoint"});
  // Beside a journal (of this plan: checked below), metadata.json is that of
  // an interrupted run, killed between installing it and removing the
  // staging directory, or started with --overwrite: the same command
  // finishes it.
  bool interrupted =
      !options.restart && !journalPaths(stagingDirectory).empty();
  if (!options.overwrite && !interrupted &&
      fs::exists(directory + "/metadata.json", error))
    return refuse(Error{"the destination directory " + quoteName(directory) +
                            " already holds a checkpoint (metadata.json)",
                        "choose an empty directory, or pass --overwrite to "
                        "replace it"});
  if (options.restart) {
    fs::remove_all(stagingDirectory, error);
    if (error)
      return fileSystemError("cannot remove " + quoteName(stagingDirectory),
                             error);
  }
  // Every journal there must be this plan's (whichever backend wrote it).
  for (const std::string &path : journalPaths(stagingDirectory)) {
    Expected<std::unique_ptr<RunJournal>> journal =
        RunJournal::open(path, options.planFingerprint);
    if (!journal.ok())
      return journal.error();
  }
  return created;
}

Expected<std::unique_ptr<DestinationFiles>>
DestinationFiles::open(const plan::Plan &plan,
                       const std::string &destinationDirectory,
                       const std::string &sourceDirectory,
                       const DestinationOptions &options) {
  std::unique_ptr<DestinationFiles> result(new DestinationFiles(plan));
  DestinationFiles &files = *result;
  files.directory_ = withoutTrailingSlashes(destinationDirectory);
  files.stagingDirectory_ = files.directory_ + "/.aoa-run";
  files.stopAfterFiles_ = options.stopAfterFiles;
  files.rank_ = options.rank;
  files.sourceDirectory_ = withoutTrailingSlashes(sourceDirectory);
  const std::string &directory = files.directory_;
  if (!options.rank) {
    Expected<bool> created =
        prepareDirectory(destinationDirectory, sourceDirectory, options);
    if (!created.ok())
      return created.error();
    files.createdDirectory_ = *created;
  }
  std::error_code error;
  // Checks that refuse the run leave the destination as it was.
  auto refuse = [&](Error refusal) -> Error {
    std::error_code ignored;
    if (files.createdDirectory_)
      fs::remove_all(directory, ignored);
    return refusal;
  };

  // Files, their tensors and sizes.
  files.files_.resize(plan.destinationFiles.size());
  for (auto &state : files.files_)
    state = std::make_unique<FileState>();
  files.positionInFile_.resize(plan.destinationTensors.size());
  for (uint32_t t = 0; t < plan.destinationTensors.size(); ++t) {
    const plan::StoredTensor &tensor = plan.destinationTensors[t];
    FileState &state = *files.files_[tensor.file];
    files.positionInFile_[t] = uint32_t(state.tensors.size());
    state.tensors.push_back(t);
    state.dataBytes +=
        uint64_t(tensor.storedElements()) * dtypeSize(tensor.dtype);
  }

  // The journals of an earlier run: a finished file counts when it is still
  // staged (or already moved into place by an interrupted install) with
  // the size and the tensor hashes a journal recorded. A rank reads the
  // local backend's journal and its own.
  std::string ownJournal =
      files.stagingDirectory_ +
      (options.rank ? "/journal." + std::to_string(*options.rank)
                    : std::string("/journal"));
  std::vector<std::string> journals;
  if (options.rank)
    journals = {files.stagingDirectory_ + "/journal", ownJournal};
  else
    journals = journalPaths(files.stagingDirectory_);
  std::set<std::string> keptStagedFiles;
  bool resuming = false;
  for (const std::string &journalPath : journals) {
    if (!fs::exists(journalPath, error))
      continue;
    resuming = true;
    Expected<std::unique_ptr<RunJournal>> journal =
        RunJournal::open(journalPath, options.planFingerprint);
    if (!journal.ok())
      return journal.error();
    for (const FinishedFile &record : (*journal)->loaded()) {
      if (record.file >= files.files_.size() || !files.owns(record.file))
        continue;
      FileState &state = *files.files_[record.file];
      if (state.finished || record.tensorHashes.size() != state.tensors.size())
        continue;
      std::string staged = files.stagedPath(record.file);
      bool isStaged = fs::exists(staged, error);
      if (!matchesRecord(isStaged ? staged : files.finalPath(record.file),
                         record, plan, state.tensors))
        continue;
      state.finished = true;
      state.fileSize = record.size;
      state.tensorHashes = record.tensorHashes;
      if (isStaged)
        keptStagedFiles.insert(fs::path(staged).lexically_normal().string());
      ++files.resumedFiles_;
    }
  }

  // Never overwrite by accident, and never a source file.
  std::set<std::pair<dev_t, ino_t>> sources;
  for (const plan::File &file : plan.sourceFiles)
    if (auto identity = fileIdentity(sourceDirectory + "/" + file.path))
      sources.insert(*identity);
  for (uint32_t f = 0; f < files.files_.size(); ++f) {
    if (!files.owns(f))
      continue;
    FileState &state = *files.files_[f];
    std::string target = files.finalPath(f);
    std::optional<std::pair<dev_t, ino_t>> identity = fileIdentity(target);
    if (identity && sources.count(*identity))
      return refuse(Error{"destination file " + quoteName(target) +
                              " is a file of the source checkpoint",
                          "write the converted checkpoint to another "
                          "directory; aoa-run never modifies a source "
                          "checkpoint"});
    if (identity && !state.finished && !options.overwrite)
      return refuse(Error{"destination file " + quoteName(target) +
                              " already exists",
                          "choose an empty directory, or pass --overwrite "
                          "to replace it"});
    if (!state.finished) {
      state.remainingBytes = int64_t(state.dataBytes);
      files.bytesToWrite_ += state.dataBytes;
    }
  }

  // What install() adds beside the files (rank 0 installs it): the copied
  // files must be there to copy, and nothing may be replaced by accident
  // (an install that an interruption cut short may have written them).
  if (!options.rank || *options.rank == 0) {
    for (const std::string &path : plan.copiedFiles) {
      std::string from = files.sourceDirectory_ + "/" + path;
      if (!fs::is_regular_file(from, error))
        return refuse(Error{"cannot copy " + quoteName(path) +
                                ": it is not a file in the source directory " +
                                quoteName(files.sourceDirectory_),
                            "the plan copies the source checkpoint's other "
                            "files (config.json, tokenizer files, ...); "
                            "run it on the directory it was compiled from"});
      if (!options.overwrite && !resuming &&
          fs::exists(directory + "/" + path, error))
        return refuse(Error{"destination file " +
                                quoteName(directory + "/" + path) +
                                " already exists",
                            "choose an empty directory, or pass --overwrite "
                            "to replace it"});
    }
    if (writesHuggingFaceIndex(plan) && !options.overwrite && !resuming &&
        fs::exists(directory + "/" + plan::kHuggingFaceIndexName, error))
      return refuse(Error{"the destination directory " + quoteName(directory) +
                              " already holds a Hugging Face index (" +
                              plan::kHuggingFaceIndexName + ")",
                          "choose an empty directory, or pass --overwrite "
                          "to replace it"});
  }

  // Staging: partial files of an interrupted run are useless. A rank
  // removes only its own (staged names and their temporaries, .NAME.tmp.*).
  fs::create_directories(files.stagingDirectory_ + "/files", error);
  if (error)
    return fileSystemError("cannot create the staging directory " +
                               quoteName(files.stagingDirectory_),
                           error);
  auto removeUnkept = [&](const fs::path &path) {
    if (!keptStagedFiles.count(path.lexically_normal().string()))
      fs::remove(path, error);
  };
  if (!options.rank) {
    for (auto it = fs::recursive_directory_iterator(
             files.stagingDirectory_ + "/files", error);
         !error && it != fs::recursive_directory_iterator();
         it.increment(error))
      if (it->is_regular_file())
        removeUnkept(it->path());
  } else {
    std::map<fs::path, std::set<std::string>> ownNames;
    for (uint32_t f = 0; f < files.files_.size(); ++f)
      if (files.owns(f)) {
        fs::path staged(files.stagedPath(f));
        ownNames[staged.parent_path()].insert(staged.filename().string());
      }
    for (const auto &[parent, names] : ownNames) {
      if (!fs::is_directory(parent, error))
        continue;
      for (auto it = fs::directory_iterator(parent, error);
           !error && it != fs::directory_iterator(); it.increment(error)) {
        if (!it->is_regular_file())
          continue;
        std::string name = it->path().filename().string();
        size_t tmp = name.rfind(".tmp.");
        bool ours = names.count(name) ||
                    (name.size() > 1 && name[0] == '.' &&
                     tmp != std::string::npos && tmp > 1 &&
                     names.count(name.substr(1, tmp - 1)));
        if (ours)
          removeUnkept(it->path());
      }
    }
  }
  if (error)
    return fileSystemError("cannot clean the staging directory " +
                               quoteName(files.stagingDirectory_),
                           error);
  Expected<std::unique_ptr<RunJournal>> journal =
      RunJournal::open(ownJournal, options.planFingerprint);
  if (!journal.ok())
    return journal.error();
  files.journal_ = std::move(*journal);
  return result;
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
  std::error_code error;
  fs::create_directories(fs::path(staged).parent_path(), error);
  if (error)
    return fileSystemError("cannot create the directory of " +
                               quoteName(staged),
                           error);
  SafetensorsWriterOptions writerOptions;
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
    return Error{"'" + path + "': tensor '" + tensor.name + "': " +
                     walk.error().message,
                 walk.error().hint};
  if (!status.ok())
    return status;
  if (shortRuns)
    writer->releaseMapped(tensor.name, firstByte, endByte - firstByte);
  if (runs == 1) // contiguous: hashed now if it continues the hashed prefix
    hashInOrder(tensorId, firstByte, data, regionBytes);
  return countWritten(tensorId, regionBytes);
}

Status DestinationFiles::writeRegionFromFile(uint32_t tensorId,
                                             const Box &region, int sourceFd,
                                             uint64_t sourceOffset,
                                             const uint8_t *sourceBytes) {
  const plan::StoredTensor &tensor = plan_.destinationTensors[tensorId];
  std::optional<int64_t> first = singleStoredRun(tensor.box, tensor.flat, region);
  if (!first)
    return Error{"'" + plan_.destinationFiles[tensor.file].path +
                     "': tensor '" + tensor.name + "': " + tensor.key +
                     region.toString() + " is not one run of bytes",
                 "this is a bug in aoa-run; please report it"};
  Expected<SafetensorsWriter *> writer = writerFor(tensorId, region);
  if (!writer.ok())
    return writer.error();
  size_t elementSize = dtypeSize(tensor.dtype);
  uint64_t offset = uint64_t(*first) * elementSize;
  uint64_t regionBytes = uint64_t(region.volume()) * elementSize;
  if (Status copied = (*writer)->copyFromFile(tensor.name, offset, sourceFd,
                                              sourceOffset, regionBytes);
      !copied.ok())
    return copied;
  if (sourceBytes)
    hashInOrder(tensorId, offset, sourceBytes, regionBytes);
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
  FileDescriptor readBack;
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
    if (!readBack.isOpen()) {
      readBack = FileDescriptor(
          ::open(writer.temporaryPath().c_str(), O_RDONLY | O_CLOEXEC));
      if (!readBack.isOpen())
        return Error{"cannot reopen " + quoteName(writer.temporaryPath()) +
                         " to hash it: " + errnoText(errno),
                     kSystemErrorHint};
    }
    Expected<uint64_t> hash =
        hashFileRange(readBack.get(), dataOffset + entry->dataBegin,
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

Status DestinationFiles::install() {
  if (Status moved = moveFilesIntoPlace(); !moved.ok())
    return moved;
  return writeMetadata(tensorHashes());
}

Status DestinationFiles::moveFilesIntoPlace() {
  for (uint32_t f = 0; f < files_.size(); ++f) {
    FileState &file = *files_[f];
    if (owns(f) && !file.finished)
      return Error{"destination file '" + plan_.destinationFiles[f].path +
                       "' is incomplete: " +
                       std::to_string(file.remainingBytes.load()) + " of its " +
                       std::to_string(file.dataBytes) +
                       " data bytes were never written",
                   "the plan does not write every destination element; "
                   "recompile it"};
  }
  // With --overwrite, DST may hold an older checkpoint: its metadata.json
  // goes first, durably, so that it never describes a mix of new and old
  // files (issue 20 D4).
  std::string metadata = directory_ + "/metadata.json";
  if (::unlink(metadata.c_str()) == 0) {
    if (Status synced = syncDirectory(directory_); !synced.ok())
      return synced;
  } else if (errno != ENOENT) {
    return Error{"cannot remove the replaced checkpoint's " +
                     quoteName(metadata) + ": " + errnoText(errno),
                 kSystemErrorHint};
  }
  std::set<std::string> directories;
  for (uint32_t f = 0; f < files_.size(); ++f) {
    if (!owns(f))
      continue;
    std::string staged = stagedPath(f), target = finalPath(f);
    std::error_code error;
    if (!fs::exists(staged, error))
      continue; // moved by an earlier, interrupted install
    fs::path parent = fs::path(target).parent_path();
    fs::create_directories(parent, error);
    if (error)
      return fileSystemError("cannot create " + quoteName(parent.string()),
                             error);
    if (!injectedFault(FaultPoint::Rename, error))
      fs::rename(staged, target, error);
    if (error)
      return fileSystemError("cannot move " + quoteName(staged) + " to " +
                                 quoteName(target),
                             error);
    directories.insert(parent.string());
  }
  for (const std::string &directory : directories)
    if (Status synced = syncDirectory(directory); !synced.ok())
      return synced;
  return Status();
}

std::vector<uint64_t> DestinationFiles::tensorHashes() const {
  std::vector<uint64_t> hashes(plan_.destinationTensors.size(), 0);
  for (uint32_t t = 0; t < hashes.size(); ++t) {
    const FileState &file = *files_[plan_.destinationTensors[t].file];
    if (file.finished && positionInFile_[t] < file.tensorHashes.size())
      hashes[t] = file.tensorHashes[positionInFile_[t]];
  }
  return hashes;
}

Status DestinationFiles::installCompanions() const {
  for (const std::string &path : plan_.copiedFiles) {
    std::string target = directory_ + "/" + path;
    std::error_code error;
    fs::create_directories(fs::path(target).parent_path(), error);
    if (error)
      return fileSystemError("cannot create the directory of " +
                                 quoteName(target),
                             error);
    if (Status copied =
            copyFileAtomically(sourceDirectory_ + "/" + path, target,
                               stagingDirectory_);
        !copied.ok())
      return copied;
  }
  if (!writesHuggingFaceIndex(plan_))
    return Status();
  std::vector<std::pair<std::string, std::string>> weightMap;
  uint64_t totalSize = 0;
  for (const plan::StoredTensor &tensor : plan_.destinationTensors) {
    weightMap.emplace_back(tensor.name,
                           plan_.destinationFiles[tensor.file].path);
    totalSize += uint64_t(tensor.storedElements()) * dtypeSize(tensor.dtype);
  }
  return writeFileAtomically(
      directory_ + "/" + plan::kHuggingFaceIndexName,
      formatHuggingFaceIndex(std::move(weightMap), totalSize),
      stagingDirectory_);
}

Status DestinationFiles::writeMetadata(const std::vector<uint64_t> &hashes) {
  if (hashes.size() != plan_.destinationTensors.size())
    return Error{"metadata.json needs " +
                     std::to_string(plan_.destinationTensors.size()) +
                     " tensor hashes, got " + std::to_string(hashes.size()),
                 "this is a bug in aoa-run; please report it"};
  // metadata.json: the destination layout, with each tensor's hash.
  ShardMetadataBuilder builder;
  llvm::StringMap<std::vector<uint32_t>> tensorsOfKey;
  std::vector<std::string> keys;
  for (uint32_t t = 0; t < plan_.destinationTensors.size(); ++t) {
    auto [it, inserted] =
        tensorsOfKey.try_emplace(plan_.destinationTensors[t].key);
    if (inserted)
      keys.push_back(plan_.destinationTensors[t].key);
    it->second.push_back(t);
  }
  for (const std::string &key : keys) {
    const std::vector<uint32_t> &tensors = tensorsOfKey[key];
    const plan::StoredTensor &first = plan_.destinationTensors[tensors[0]];
    if (!builder.addTensor(key, first.dtype, first.globalShape))
      return Error{"cannot describe '" + key + "' in metadata.json",
                   "the plan is inconsistent; recompile it"};
    for (uint32_t t : tensors) {
      const plan::StoredTensor &tensor = plan_.destinationTensors[t];
      const plan::File &file = plan_.destinationFiles[tensor.file];
      std::optional<ShardId> shard =
          builder.addShard(file.rank, file.path, tensor.name,
                           tensor.box.offsets(), tensor.box.shape(), tensor.flat);
      if (!shard)
        return Error{"cannot describe '" + key + "' in metadata.json",
                     "the plan is inconsistent; recompile it"};
      builder.setContentHash(*shard, hashes[t]);
    }
  }
  if (Status companions = installCompanions(); !companions.ok())
    return companions;
  std::ostringstream metadata;
  writeShardMetadata(builder.finish(), metadata);
  if (Status written =
          writeFileAtomically(directory_ + "/metadata.json", metadata.str(),
                              stagingDirectory_);
      !written.ok()) {
    // It may have failed after its rename (syncing the directory): a failed
    // run leaves no metadata.json, or the same command would not resume.
    ::unlink((directory_ + "/metadata.json").c_str());
    return written;
  }
  std::error_code error;
  fs::remove_all(stagingDirectory_, error);
  if (error)
    return fileSystemError("the checkpoint is complete, but removing " +
                               quoteName(stagingDirectory_) + " failed",
                           error);
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
  std::error_code ignored;
  fs::remove_all(directory + "/.aoa-run", ignored);
  if (removeDestination && fs::is_empty(directory, ignored))
    fs::remove(directory, ignored);
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
