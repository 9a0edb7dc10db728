//===- DirectoryScan.cpp - Shard metadata from safetensors headers --------===//
//
// The files are opened with the runtime's SafetensorsReader, which reads and
// validates the header only, on a few threads; what the metadata needs is
// copied out and the file closed again, so a directory of thousands of files
// never holds more than one descriptor per thread. Tensors are then sorted by
// key, which finds keys held twice and lets the index be checked in one merge
// walk, so the first problem reported is the one with the smallest key.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/DirectoryScan.h"

#include "DirectoryListing.h"
#include "PaddedIndexText.h"
#include "Text.h"

#include "aoa/formats/SafetensorsIndex.h"
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/support/ThreadPool.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa::formats {

namespace {

const char *const kMixedHint =
    "the index and the files do not belong together (an interrupted "
    "download, or files of two revisions); fetch the index and the files of "
    "one revision again";

const char *const kNoCheckpointHint =
    "a checkpoint directory holds aoa's metadata.json, a Hugging Face "
    "model.safetensors.index.json or model.safetensors, or *.safetensors "
    "files";

/// A tensor as its file's header describes it. Its key and shape are in
/// the scanner's arrays: 10^5 tensors make no allocation each.
struct FoundTensor {
  uint64_t keyBegin = 0; ///< into Scanner::keys_
  uint32_t keyLength = 0;
  uint32_t file = 0;       ///< into the scan's file list
  uint64_t shapeBegin = 0; ///< into Scanner::shapes_
  uint32_t ndim = 0;
  DType dtype = DType::F32;
};

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

/// "a symbolic link to the missing 'TARGET'" when `path` is one.
std::string describeMissing(const std::string &path) {
  struct stat status;
  if (::lstat(path.c_str(), &status) != 0 || !S_ISLNK(status.st_mode))
    return "does not exist";
  std::string target(PATH_MAX, '\0');
  ssize_t length = ::readlink(path.c_str(), target.data(), target.size());
  if (length < 0)
    return "is a broken symbolic link";
  target.resize(size_t(length));
  return "is a symbolic link to the missing " + quote(target);
}

class Scanner {
public:
  explicit Scanner(const std::string &directory) {
    result_.directory = directory;
  }

  Expected<CheckpointDirectory> run();

private:
  Status scanIndex();
  Status readHeaders();
  Status checkTwoFiles(size_t begin, size_t end, std::string_view where,
                       const std::string *indexedFile = nullptr) const;
  Status checkAgainstIndex(const SafetensorsIndex &index) const;
  Status buildMetadata();

  std::string path(std::string_view name) const {
    return joinPath(result_.directory, name);
  }
  const std::string &fileName(const FoundTensor &tensor) const {
    return result_.tensorFiles[tensor.file];
  }
  std::string_view key(const FoundTensor &tensor) const {
    return std::string_view(keys_).substr(tensor.keyBegin, tensor.keyLength);
  }
  llvm::ArrayRef<int64_t> shape(const FoundTensor &tensor) const {
    return llvm::ArrayRef<int64_t>(shapes_.data() + tensor.shapeBegin,
                                   tensor.ndim);
  }

  CheckpointDirectory result_;
  std::vector<DirectoryEntry> entries_;
  /// Sorted by key, then file.
  std::vector<FoundTensor> found_;
  std::string keys_;
  std::vector<int64_t> shapes_;
};

Expected<CheckpointDirectory> Scanner::run() {
  Expected<std::vector<DirectoryEntry>> entries =
      listDirectory(result_.directory);
  if (!entries)
    return entries.error();
  entries_ = std::move(*entries);

  if (const DirectoryEntry *index = findEntry(entries_, kHuggingFaceIndexFile);
      index && (index->regularFile || index->brokenLink)) {
    result_.kind = CheckpointKind::HuggingFaceIndex;
    result_.descriptionFile = kHuggingFaceIndexFile;
    if (Status status = scanIndex(); !status)
      return status.error();
  } else {
    if (const DirectoryEntry *single =
            findEntry(entries_, kHuggingFaceSingleFile);
        single && (single->regularFile || single->brokenLink)) {
      result_.kind = CheckpointKind::HuggingFaceSingleFile;
      result_.tensorFiles.push_back(kHuggingFaceSingleFile);
    } else {
      result_.kind = CheckpointKind::SafetensorsFiles;
      for (const DirectoryEntry &entry : entries_)
        if (endsWith(entry.name, ".safetensors") &&
            (entry.regularFile || entry.brokenLink))
          result_.tensorFiles.push_back(entry.name);
      if (result_.tensorFiles.empty())
        return Error{result_.directory + ": no checkpoint here: no " +
                         kAoaMetadataFile + ", " + kHuggingFaceIndexFile +
                         ", " + kHuggingFaceSingleFile +
                         " or *.safetensors file",
                     kNoCheckpointHint};
    }
    if (Status status = readHeaders(); !status)
      return status.error();
    // A key held by two files.
    for (size_t i = 0; i < found_.size();) {
      size_t end = i + 1;
      while (end < found_.size() && key(found_[end]) == key(found_[i]))
        ++end;
      if (Status status = checkTwoFiles(i, end, result_.directory); !status)
        return status.error();
      i = end;
    }
  }
  if (Status status = buildMetadata(); !status)
    return status.error();
  classifyOtherFiles(result_, entries_);
  return std::move(result_);
}

Status Scanner::scanIndex() {
  std::string indexPath = path(kHuggingFaceIndexFile);
  Expected<SafetensorsIndex> index = [&]() -> Expected<SafetensorsIndex> {
    Expected<PaddedFileText> text = PaddedFileText::read(indexPath);
    if (!text)
      return text.error();
    return parsePaddedSafetensorsIndex(text->text(), text->capacity(),
                                       indexPath);
  }();
  if (!index)
    return index.error();
  // Room for what the headers will hold (they should hold the index's keys).
  keys_.reserve(index->keyBytes.size());
  found_.reserve(index->weightMap.size());
  shapes_.reserve(3 * index->weightMap.size());

  // A missing file first: an incomplete download is the usual problem.
  result_.tensorFiles = index->files;
  for (uint32_t file = 0; file < result_.tensorFiles.size(); ++file) {
    const std::string &name = result_.tensorFiles[file];
    struct stat status;
    if (::stat(path(name).c_str(), &status) == 0)
      continue;
    size_t count = 0;
    std::string_view example; // the smallest key: weightMap is sorted
    for (const SafetensorsIndex::Entry &entry : index->weightMap)
      if (entry.file == file && count++ == 0)
        example = index->key(entry);
    return Error{path(name) + ": the file " + describeMissing(path(name)) +
                     ", but " + kHuggingFaceIndexFile + " puts " +
                     std::to_string(count) +
                     (count == 1 ? " tensor" : " tensors") + " in it (" +
                     quote(example) + (count > 1 ? ", ...)" : ")"),
                 "the download or copy is incomplete: fetch the missing "
                 "file again"};
  }
  if (Status status = readHeaders(); !status)
    return status;
  return checkAgainstIndex(*index);
}

Status Scanner::readHeaders() {
  // Files are opened on a few threads: on a network file system an open
  // costs a round trip. Each file's tensors go to their own arrays first.
  struct FileTensors {
    std::string keys;
    std::vector<int64_t> shapes;
    std::vector<FoundTensor> tensors;
    uint64_t bytes = 0;
  };
  size_t fileCount = result_.tensorFiles.size();
  std::vector<FileTensors> perFile(fileCount);
  runtime::ThreadPool pool(
      unsigned(std::min<size_t>(std::min(runtime::defaultThreadCount(), 8u),
                                std::max<size_t>(fileCount, 1))));
  // The lowest-numbered failing file's error: files are handed out in order.
  Status read = pool.parallelFor(fileCount, [&](size_t fileId) -> Status {
    Expected<runtime::SafetensorsReader> reader =
        runtime::SafetensorsReader::open(path(result_.tensorFiles[fileId]));
    if (!reader)
      return reader.error();
    FileTensors &file = perFile[fileId];
    file.tensors.reserve(reader->tensors().size());
    for (const runtime::SafetensorsTensor &tensor : reader->tensors()) {
      FoundTensor found;
      found.keyBegin = file.keys.size();
      found.keyLength = uint32_t(tensor.name.size());
      found.file = uint32_t(fileId);
      found.shapeBegin = file.shapes.size();
      found.ndim = uint32_t(tensor.shape.size());
      found.dtype = tensor.dtype;
      file.keys += tensor.name;
      file.shapes.insert(file.shapes.end(), tensor.shape.begin(),
                         tensor.shape.end());
      file.tensors.push_back(found);
      file.bytes += tensor.byteSize();
    }
    return Status();
  });
  if (!read)
    return read;
  for (FileTensors &file : perFile) {
    for (FoundTensor found : file.tensors) {
      found.keyBegin += keys_.size();
      found.shapeBegin += shapes_.size();
      found_.push_back(found);
    }
    keys_ += file.keys;
    shapes_.insert(shapes_.end(), file.shapes.begin(), file.shapes.end());
    result_.tensorBytes += file.bytes;
    file = FileTensors();
  }
  std::sort(found_.begin(), found_.end(),
            [&](const FoundTensor &a, const FoundTensor &b) {
              int compared = key(a).compare(key(b));
              return compared != 0 ? compared < 0 : a.file < b.file;
            });
  return Status();
}

/// found_[begin, end) share a key: more than one is an error.
Status Scanner::checkTwoFiles(size_t begin, size_t end, std::string_view where,
                              const std::string *indexedFile) const {
  if (end - begin < 2)
    return Status();
  const FoundTensor &first = found_[begin];
  const FoundTensor &second = found_[begin + 1];
  return Error{std::string(where) + ": tensor " + quote(key(first)) +
                   " is in two files: " + fileName(first) + " and " +
                   fileName(second) +
                   (indexedFile ? " (the index puts it in " + *indexedFile + ")"
                                : std::string()),
               result_.kind == CheckpointKind::HuggingFaceIndex
                   ? kMixedHint
                   : "the files of a directory without an index must hold "
                     "different tensors; move copies (e.g. a "
                     "consolidated.safetensors) out of the directory"};
}

Status Scanner::checkAgainstIndex(const SafetensorsIndex &index) const {
  // Both sorted by key: one merge walk finds the smallest key in trouble.
  std::string where = path(kHuggingFaceIndexFile);
  size_t i = 0; // into found_ (groups of one key)
  size_t j = 0; // into index.weightMap
  while (i < found_.size() || j < index.weightMap.size()) {
    const SafetensorsIndex::Entry *entry =
        j < index.weightMap.size() ? &index.weightMap[j] : nullptr;
    std::optional<std::string_view> fileKey;
    if (i < found_.size())
      fileKey = key(found_[i]);
    if (!fileKey || (entry && index.key(*entry) < *fileKey))
      return Error{where + ": tensor " + quote(index.key(*entry)) +
                       " is not in " + index.files[entry->file] +
                       " where the index puts it, nor in any other file of "
                       "the index",
                   kMixedHint};
    size_t end = i + 1;
    while (end < found_.size() && key(found_[end]) == *fileKey)
      ++end;
    if (!entry || *fileKey < index.key(*entry))
      return Error{where + ": tensor " + quote(*fileKey) + " of " +
                       fileName(found_[i]) +
                       " is not in the index's weight_map",
                   kMixedHint};
    const std::string &file = index.files[entry->file];
    if (Status status = checkTwoFiles(i, end, where, &file); !status)
      return status;
    if (found_[i].file != entry->file)
      return Error{where + ": tensor " + quote(*fileKey) + " is in " +
                       fileName(found_[i]) + ", not in " + file +
                       " where the index puts it",
                   kMixedHint};
    i = end;
    ++j;
  }
  return Status();
}

Status Scanner::buildMetadata() {
  ShardMetadataBuilder builder;
  builder.reserve(found_.size(), found_.size(), 2 * shapes_.size());
  std::vector<uint32_t> fileIds;
  for (const std::string &file : result_.tensorFiles)
    fileIds.push_back(builder.internFile(file));
  std::vector<int64_t> zeros;
  for (const FoundTensor &tensor : found_) {
    std::optional<TensorId> id =
        builder.addTensor(key(tensor), tensor.dtype, shape(tensor));
    zeros.assign(tensor.ndim, 0);
    if (!id || !builder.addShard(0, fileIds[tensor.file],
                                 builder.keyNameId(*id), zeros, shape(tensor)))
      return Error{path(fileName(tensor)) + ": tensor " + quote(key(tensor)) +
                       " has " + std::to_string(tensor.ndim) +
                       " dimensions, more than the 255 aoa supports",
                   "reshape it to fewer dimensions before converting"};
  }
  result_.metadata = builder.finish();
  return Status();
}

} // namespace

Expected<CheckpointDirectory>
scanSafetensorsDirectory(const std::string &directory) {
  return Scanner(directory).run();
}

} // namespace aoa::formats
