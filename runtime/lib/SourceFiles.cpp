//===- SourceFiles.cpp ----------------------------------------------------===//
#include "aoa/runtime/SourceFiles.h"

#include "aoa/runtime/StoredRegion.h"
#include "aoa/runtime/ThreadPool.h"

#include <cstring>
#include <mutex>

namespace aoa::runtime {

namespace {

/// Runs shorter than this on average are copied from the mapping.
constexpr size_t kShortRunBytes = 64 << 10;
constexpr size_t kMaxReportedProblems = 20;

/// Collects the problems found while opening, from several threads.
class ProblemList {
public:
  void add(Error error) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++count_;
    if (errors_.size() < kMaxReportedProblems)
      errors_.push_back(std::move(error));
  }
  bool empty() const { return count_ == 0; }
  Error combined() const {
    if (count_ == 1)
      return errors_.front();
    Error error;
    error.message = std::to_string(count_) +
                    " problems with the source checkpoint:";
    for (const Error &e : errors_)
      error.message += "\n  " + e.message;
    if (count_ > errors_.size())
      error.message +=
          "\n  ... and " + std::to_string(count_ - errors_.size()) + " more";
    error.hint = errors_.front().hint;
    return error;
  }

private:
  std::mutex mutex_;
  size_t count_ = 0;
  std::vector<Error> errors_;
};

} // namespace

Expected<SourceFiles> SourceFiles::open(const plan::Plan &plan,
                                        const std::string &sourceDirectory,
                                        const std::vector<bool> &needed,
                                        ThreadPool &pool) {
  SourceFiles files(plan);
  files.readers_.resize(plan.sourceFiles.size());
  files.entries_.assign(plan.sourceTensors.size(), nullptr);
  auto isNeeded = [&](size_t file) { return file < needed.size() && needed[file]; };
  ProblemList problems;
  Status opened = pool.parallelFor(plan.sourceFiles.size(), [&](size_t i) {
    if (!isNeeded(i))
      return Status();
    SafetensorsReaderOptions options;
    options.memoryMap = true;
    Expected<SafetensorsReader> reader = SafetensorsReader::open(
        sourceDirectory + "/" + plan.sourceFiles[i].path, options);
    if (!reader.ok())
      problems.add(reader.error());
    else
      files.readers_[i].emplace(std::move(*reader));
    return Status();
  });
  if (!opened.ok())
    return opened.error();
  for (size_t i = 0; i < plan.sourceTensors.size(); ++i) {
    const plan::StoredTensor &tensor = plan.sourceTensors[i];
    if (!isNeeded(tensor.file) || !files.readers_[tensor.file])
      continue;
    const SafetensorsReader &reader = *files.readers_[tensor.file];
    const SafetensorsTensor *entry = reader.find(tensor.name);
    std::string where = reader.path() + ": tensor '" + tensor.name + "' (" +
                        tensor.key + tensor.box.toString() + ")";
    const char *hint = "the source checkpoint does not match the metadata the "
                       "plan was compiled from; recompile the plan from this "
                       "checkpoint's metadata, or point --src-dir at the "
                       "checkpoint it describes";
    if (!entry) {
      problems.add(Error{where + " is not in the file", hint});
      continue;
    }
    if (entry->dtype != tensor.dtype) {
      problems.add(Error{where + " is " + std::string(dtypeName(entry->dtype)) +
                             ", the plan expects " +
                             std::string(dtypeName(tensor.dtype)),
                         hint});
      continue;
    }
    std::vector<int64_t> shape = tensor.storedShape();
    if (entry->shape != shape) {
      problems.add(Error{where + " has shape " + formatShape(entry->shape) +
                             ", the plan expects " + formatShape(shape),
                         hint});
      continue;
    }
    files.entries_[i] = entry;
  }
  if (!problems.empty())
    return problems.combined();
  return files;
}

Expected<std::pair<const SafetensorsReader *, const SafetensorsTensor *>>
SourceFiles::entryOf(uint32_t tensorId) const {
  const plan::StoredTensor &tensor = plan_->sourceTensors[tensorId];
  const SafetensorsTensor *entry = entries_[tensorId];
  if (!entry || !readers_[tensor.file])
    return Error{"source tensor '" + tensor.name + "' of '" +
                     plan_->sourceFiles[tensor.file].path +
                     "' was not opened for this run",
                 "this is a bug in aoa-run; please report it"};
  return std::make_pair(&*readers_[tensor.file], entry);
}

Expected<SourceRun> SourceFiles::locateRun(uint32_t tensorId,
                                           const Box &region) const {
  auto found = entryOf(tensorId);
  if (!found.ok())
    return found.error();
  const auto [reader, entry] = *found;
  const plan::StoredTensor &tensor = plan_->sourceTensors[tensorId];
  size_t elementSize = dtypeSize(tensor.dtype);
  std::optional<int64_t> first = singleStoredRun(tensor.box, tensor.flat, region);
  uint64_t offset = first ? uint64_t(*first) * elementSize : 0;
  uint64_t size = uint64_t(region.volume()) * elementSize;
  // The header was checked against the file, so this only catches a plan
  // that disagrees with it.
  if (!first || offset > entry->byteSize() || size > entry->byteSize() - offset)
    return Error{reader->path() + ": tensor '" + tensor.name + "': " +
                     tensor.key + region.toString() +
                     " is not one run of bytes in the file",
                 "this is a bug in aoa-run; please report it"};
  SourceRun run;
  run.fd = reader->fileDescriptor();
  run.fileOffset = reader->dataOffset() + entry->dataBegin + offset;
  run.size = size;
  if (std::optional<llvm::ArrayRef<uint8_t>> mapped = reader->mappedBytes(*entry))
    run.mapped = mapped->data() + offset;
  run.tensor = tensorId;
  run.tensorOffset = offset;
  return run;
}

void SourceFiles::releaseRun(const SourceRun &run) const {
  auto found = entryOf(run.tensor);
  if (found.ok())
    found->first->releaseMapped(*found->second, run.tensorOffset, run.size);
}

Status SourceFiles::readRegion(uint32_t tensorId, const Box &region,
                               void *buffer, size_t bufferBytes) const {
  auto found = entryOf(tensorId);
  if (!found.ok())
    return found.error();
  const plan::StoredTensor &tensor = plan_->sourceTensors[tensorId];
  const SafetensorsReader &reader = *found->first;
  const SafetensorsTensor *entry = found->second;
  size_t elementSize = dtypeSize(tensor.dtype);
  if (size_t(region.volume()) * elementSize > bufferBytes)
    return Error{reader.path() + ": reading " + tensor.key +
                     region.toString() + " needs " +
                     std::to_string(region.volume() * elementSize) +
                     " bytes, the buffer has " + std::to_string(bufferBytes),
                 "the plan is inconsistent; recompile it"};
  auto *out = static_cast<uint8_t *>(buffer);
  int64_t runs = storedRunCount(tensor.box, region);
  std::optional<llvm::ArrayRef<uint8_t>> mapped;
  if (runs > 1 && size_t(region.volume()) * elementSize / size_t(runs) <
                      kShortRunBytes)
    mapped = reader.mappedBytes(*entry);
  Status status;
  size_t mappedBegin = SIZE_MAX, mappedEnd = 0;
  Status walk = forEachStoredRun(
      tensor.box, tensor.flat, region, [&](const StoredRun &run) {
        size_t from = size_t(run.storedOffset) * elementSize;
        size_t size = size_t(run.count) * elementSize;
        uint8_t *to = out + size_t(run.regionOffset) * elementSize;
        if (mapped) {
          std::memcpy(to, mapped->data() + from, size);
          mappedBegin = std::min(mappedBegin, from);
          mappedEnd = std::max(mappedEnd, from + size);
          return true;
        }
        status = reader.readBytes(*entry, from, to, size,
                                  SafetensorsReader::ReadMethod::SystemCall);
        return status.ok();
      });
  // A run that reads a whole checkpoint through the mapping must not look
  // as large as the checkpoint.
  if (mapped && mappedBegin < mappedEnd)
    reader.releaseMapped(*entry, mappedBegin, mappedEnd - mappedBegin);
  if (!walk.ok())
    return Error{reader.path() + ": tensor '" + tensor.name + "': " +
                     walk.error().message,
                 walk.error().hint};
  return status;
}

} // namespace aoa::runtime
