//===- SourceFiles.cpp ----------------------------------------------------===//
#include "aoa/runtime/storage/SourceFiles.h"

#include "aoa/runtime/storage/StoredRegion.h"
#include "aoa/runtime/support/ThreadPool.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

namespace aoa::runtime {

namespace {

/// Regions whose runs are shorter than this on average are gathered.
constexpr size_t kShortRunBytes = 64 << 10;
/// A gathered pread spans at most this many bytes of the file...
constexpr size_t kGatherWindowBytes = 1 << 20;
/// ...and skips at most this many bytes between two runs (reading a gap
/// costs about as much as a system call at this size).
constexpr size_t kMaxGapBytes = 8 << 10;
constexpr size_t kMaxReportedProblems = 20;

constexpr const char *kChangedHint =
    "the source file changed after the plan was compiled; recompile the "
    "plan from the checkpoint as it is now, or restore the files it was "
    "compiled from";

/// Reads many short runs of one tensor with few preads: runs close to each
/// other in the file are read as one span into a window buffer and copied
/// out of it; a run far from its neighbours is read on its own, straight
/// into its place.
class RunGatherer {
public:
  RunGatherer(const SafetensorsReader &reader, const SafetensorsTensor &entry,
              uint8_t *out)
      : reader_(reader), entry_(entry), out_(out) {}

  /// Adds the run of `size` bytes at tensor offset `from`, bound for
  /// `to` (from the start of the output); runs come in increasing order.
  Status add(size_t from, size_t size, size_t to) {
    if (!pending_.empty()) {
      size_t end = pending_.back().from + pending_.back().size;
      if (from - end > kMaxGapBytes ||
          from + size - pending_.front().from > kGatherWindowBytes)
        if (Status flushed = flush(); !flushed.ok())
          return flushed;
    }
    pending_.push_back(Run{from, size, to});
    return Status();
  }

  /// Reads the runs still pending.
  Status flush() {
    if (pending_.empty())
      return Status();
    const Run &first = pending_.front();
    Status status;
    if (pending_.size() == 1) {
      status = reader_.readBytes(entry_, first.from, out_ + first.to,
                                 first.size);
    } else {
      size_t span = pending_.back().from + pending_.back().size - first.from;
      if (!window_)
        window_ = std::make_unique<uint8_t[]>(kGatherWindowBytes);
      status = reader_.readBytes(entry_, first.from, window_.get(), span);
      if (status.ok())
        for (const Run &run : pending_)
          std::memcpy(out_ + run.to, window_.get() + (run.from - first.from),
                      run.size);
    }
    pending_.clear();
    return status;
  }

private:
  struct Run {
    size_t from, size, to;
  };
  const SafetensorsReader &reader_;
  const SafetensorsTensor &entry_;
  uint8_t *out_;
  std::vector<Run> pending_;
  std::unique_ptr<uint8_t[]> window_;
};

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
    Expected<SafetensorsReader> reader = SafetensorsReader::open(
        sourceDirectory + "/" + plan.sourceFiles[i].path);
    const std::optional<uint64_t> &size = plan.sourceFiles[i].size;
    if (!reader.ok())
      problems.add(reader.error());
    else if (size && reader->fileSize() != *size)
      problems.add(Error{reader->path() + ": the file holds " +
                             std::to_string(reader->fileSize()) +
                             " bytes, but it held " + std::to_string(*size) +
                             " when the plan was compiled",
                         kChangedHint});
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
    if (tensor.data && (entry->dataBegin != tensor.data->begin ||
                        entry->dataEnd != tensor.data->end)) {
      problems.add(Error{where + " is at bytes [" +
                             std::to_string(entry->dataBegin) + ", " +
                             std::to_string(entry->dataEnd) +
                             ") of the data section, but was at [" +
                             std::to_string(tensor.data->begin) + ", " +
                             std::to_string(tensor.data->end) +
                             ") when the plan was compiled",
                         kChangedHint});
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

Expected<std::vector<SourceRun>>
SourceFiles::locateRuns(uint32_t tensorId, const Box &region) const {
  auto found = entryOf(tensorId);
  if (!found.ok())
    return found.error();
  const auto [reader, entry] = *found;
  const plan::StoredTensor &tensor = plan_->sourceTensors[tensorId];
  uint64_t elementSize = dtypeSize(tensor.dtype);
  uint64_t base = reader->dataOffset() + entry->dataBegin;
  std::vector<SourceRun> runs;
  bool inside = true;
  Status walk = forEachStoredRun(
      tensor.box, tensor.flat, region, [&](const StoredRun &run) {
        uint64_t offset = uint64_t(run.storedOffset) * elementSize;
        uint64_t size = uint64_t(run.count) * elementSize;
        // The header was checked against the file, so this only catches a
        // plan that disagrees with it.
        inside = offset <= entry->byteSize() &&
                 size <= entry->byteSize() - offset;
        runs.push_back({reader->fileDescriptor(), base + offset, size});
        return inside;
      });
  if (!walk.ok() || !inside)
    return Error{reader->path() + ": tensor '" + tensor.name + "': " +
                     tensor.key + region.toString() +
                     " is not inside the stored tensor",
                 "this is a bug in aoa-run; please report it"};
  return runs;
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
  std::optional<RunGatherer> gatherer;
  if (runs > 1 &&
      size_t(region.volume()) * elementSize / size_t(runs) < kShortRunBytes)
    gatherer.emplace(reader, *entry, out);
  Status status;
  Status walk = forEachStoredRun(
      tensor.box, tensor.flat, region, [&](const StoredRun &run) {
        size_t from = size_t(run.storedOffset) * elementSize;
        size_t size = size_t(run.count) * elementSize;
        size_t to = size_t(run.regionOffset) * elementSize;
        status = gatherer ? gatherer->add(from, size, to)
                          : reader.readBytes(*entry, from, out + to, size);
        return status.ok();
      });
  if (!walk.ok())
    return Error{reader.path() + ": tensor '" + tensor.name + "': " +
                     walk.error().message,
                 walk.error().hint};
  if (status.ok() && gatherer)
    status = gatherer->flush();
  return status;
}

} // namespace aoa::runtime
