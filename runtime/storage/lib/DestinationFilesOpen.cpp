//===- DestinationFilesOpen.cpp - Preparing DST and resuming ----*- C++ -*-===//
//
// DestinationFiles' first steps (see DestinationFiles.h): preparing the
// destination directory and loading the journals of an earlier run; what
// already exists in DST and in staging is checked and cleared in
// DestinationFilesExisting.cpp. Paths beneath DST are resolved by handle
// (DestinationDirectory.h).
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/DestinationFiles.h"

#include "DestinationDirectory.h"
#include "DestinationFileState.h"
#include "FileSystemSupport.h"
#include "RunJournal.h"
#include "aoa/ir/HuggingFaceIndex.h"
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/support/Messages.h"

#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace aoa::runtime {

namespace {

Error fileSystemError(const std::string &what, const std::error_code &error) {
  return Error{what + ": " + error.message(), kSystemErrorHint};
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

/// The run journals in the staging directory (open as `staging`): "journal"
/// (the local backend's) and "journal.RANK" (the mpi backend's), sorted.
Expected<std::vector<std::string>> journalNames(int staging,
                                                const std::string &path) {
  Expected<std::vector<std::pair<std::string, EntryKind>>> entries =
      listDirectory(staging, path);
  if (!entries.ok())
    return entries.error();
  std::vector<std::string> names;
  for (const auto &[name, kind] : *entries) {
    bool rankJournal =
        name.size() > 8 && name.compare(0, 8, "journal.") == 0 &&
        name.find_first_not_of("0123456789", 8) == std::string::npos;
    if (name == "journal" || rankJournal)
      names.push_back(name);
  }
  return names;
}

/// `inner` is `outer` or lies beneath it (both absolute and normal).
bool isWithin(const std::string &inner, const std::string &outer) {
  if (inner.compare(0, outer.size(), outer) != 0)
    return false;
  return inner.size() == outer.size() || outer.back() == '/' ||
         inner[outer.size()] == '/';
}

/// aoa-run never creates, replaces or removes anything in the source
/// checkpoint: the destination may be neither inside the source directory
/// nor around it (a destination file `s/x` would land in the source `s`).
/// Compared as real paths, links resolved; checked before DST is created.
Status checkApartFromSource(const std::string &directory,
                            const std::string &sourceDirectory) {
  if (sourceDirectory.empty())
    return Status();
  std::error_code error;
  std::string destination = withoutTrailingSlashes(
      fs::weakly_canonical(fs::absolute(directory), error)
          .lexically_normal()
          .string());
  if (error)
    return Status(); // creating it reports what is wrong
  std::string source = withoutTrailingSlashes(
      fs::weakly_canonical(fs::absolute(sourceDirectory), error)
          .lexically_normal()
          .string());
  if (error)
    return Status();
  const char *hint = "write the converted checkpoint to another directory; "
                     "aoa-run never modifies a source checkpoint";
  if (destination == source)
    return Error{"the destination directory " + quoteName(directory) +
                     " is the source directory",
                 hint};
  if (isWithin(destination, source))
    return Error{"the destination directory " + quoteName(directory) +
                     " is inside the source directory " +
                     quoteName(sourceDirectory),
                 hint};
  if (isWithin(source, destination))
    return Error{"the source directory " + quoteName(sourceDirectory) +
                     " is inside the destination directory " +
                     quoteName(directory),
                 "write the converted checkpoint to a directory that does "
                 "not contain the source; aoa-run never modifies a source "
                 "checkpoint"};
  return Status();
}

/// --restart: removes everything in the staging directory but the lock,
/// which this run holds.
Status clearStaging(int staging, const std::string &stagingDirectory) {
  Expected<std::vector<std::pair<std::string, EntryKind>>> entries =
      listDirectory(staging, stagingDirectory);
  if (!entries.ok())
    return entries.error();
  for (const auto &entry : *entries)
    if (entry.first != kLockFileName)
      if (Status removed = removeTree(staging, stagingDirectory, entry.first);
          !removed.ok())
        return removed.error();
  return Status();
}

/// Every journal in the staging directory must be this plan's (whichever
/// backend wrote it).
Status checkJournalsOfPlan(int staging, const std::string &stagingDirectory,
                           uint64_t planFingerprint) {
  Expected<std::vector<std::string>> journals =
      journalNames(staging, stagingDirectory);
  if (!journals.ok())
    return journals.error();
  for (const std::string &name : *journals) {
    Expected<std::unique_ptr<RunJournal>> journal = RunJournal::open(
        stagingDirectory + "/" + name, planFingerprint, staging);
    if (!journal.ok())
      return journal.error();
  }
  return Status();
}

} // namespace

Expected<PreparedDestination>
DestinationFiles::prepareDirectory(const std::string &destinationDirectory,
                                   const std::string &sourceDirectory,
                                   const DestinationOptions &options) {
  std::string directory = withoutTrailingSlashes(destinationDirectory);
  std::string stagingDirectory = directory + "/" + kStagingDirectoryName;
  if (Status apart = checkApartFromSource(directory, sourceDirectory);
      !apart.ok())
    return apart.error();
  PreparedDestination prepared;
  std::error_code error;
  prepared.created = !fs::exists(directory, error);
  fs::create_directories(directory, error);
  if (error)
    return fileSystemError("cannot create the destination directory " +
                               quoteName(directory),
                           error);
  Expected<FileDescriptor> root = openDirectory(directory);
  if (!root.ok())
    return root.error();
  prepared.createdStaging =
      entryKind(root->get(), kStagingDirectoryName) == EntryKind::Missing;
  // Checks that refuse the run leave the destination as it was.
  auto refuse = [&](Error refusal) -> Error {
    if (prepared.createdStaging)
      (void)removeTree(root->get(), directory, kStagingDirectoryName);
    if (prepared.created)
      ::rmdir(directory.c_str());
    return refusal;
  };
  Expected<FileDescriptor> staging =
      openDirectoryBeneath(root->get(), directory, kStagingDirectoryName, true);
  if (!staging.ok())
    return refuse(staging.error());
  // Another run's refusal must not touch its staging directory: nothing is
  // undone when the lock is taken.
  Expected<FileDescriptor> lock = lockDestination(staging->get(), directory);
  if (!lock.ok())
    return lock.error();
  prepared.lock = std::move(*lock);
  EntryKind metadata = entryKind(root->get(), "metadata.json");
  if (metadata == EntryKind::Directory)
    return refuse(directoryInTheWayOf(directory + "/metadata.json",
                                      "the checkpoint's metadata"));
  // Beside a journal (of this plan: checked below), metadata.json is that of
  // an interrupted run, killed between installing it and removing the
  // staging directory, or started with --overwrite: the same command
  // finishes it.
  Expected<std::vector<std::string>> earlierJournals =
      journalNames(staging->get(), stagingDirectory);
  if (!earlierJournals.ok())
    return refuse(earlierJournals.error());
  bool interrupted = !options.restart && !earlierJournals->empty();
  if (!options.overwrite && !interrupted && metadata != EntryKind::Missing)
    return refuse(Error{"the destination directory " + quoteName(directory) +
                            " already holds a checkpoint (metadata.json)",
                        "choose an empty directory, or pass --overwrite to "
                        "replace it"});
  if (options.restart)
    if (Status cleared = clearStaging(staging->get(), stagingDirectory);
        !cleared.ok())
      return cleared.error();
  if (Status checked = checkJournalsOfPlan(staging->get(), stagingDirectory,
                                           options.planFingerprint);
      !checked.ok())
    return checked.error();
  return prepared;
}

bool DestinationFiles::isLockedByAnotherRun(
    const std::string &destinationDirectory) {
  std::string directory = withoutTrailingSlashes(destinationDirectory);
  Expected<FileDescriptor> root = openDirectory(directory);
  if (!root.ok())
    return false;
  Expected<FileDescriptor> staging = openDirectoryBeneath(
      root->get(), directory, kStagingDirectoryName, false);
  return staging.ok() && staging->isOpen() &&
         isDestinationLocked(staging->get());
}

void DestinationFiles::undoCreation() {
  if (createdStaging_ || createdDirectory_)
    (void)removeTree(root_.get(), directory_, kStagingDirectoryName);
  if (createdDirectory_)
    ::rmdir(directory_.c_str());
}

Expected<std::unique_ptr<DestinationFiles>> DestinationFiles::open(
    const plan::Plan &plan, const std::string &destinationDirectory,
    const std::string &sourceDirectory, const DestinationOptions &options) {
  std::unique_ptr<DestinationFiles> result(new DestinationFiles(plan));
  DestinationFiles &files = *result;
  files.directory_ = withoutTrailingSlashes(destinationDirectory);
  files.stagingDirectory_ = files.directory_ + "/" + kStagingDirectoryName;
  files.stopAfterFiles_ = options.stopAfterFiles;
  files.rank_ = options.rank;
  files.sourceDirectory_ = withoutTrailingSlashes(sourceDirectory);
  if (!options.rank) {
    Expected<PreparedDestination> prepared =
        prepareDirectory(destinationDirectory, sourceDirectory, options);
    if (!prepared.ok())
      return prepared.error();
    files.createdDirectory_ = prepared->created;
    files.createdStaging_ = prepared->createdStaging;
    files.lock_ = std::move(prepared->lock);
  }
  Expected<FileDescriptor> root = openDirectory(files.directory_);
  if (!root.ok())
    return root.error();
  files.root_ = std::move(*root);
  // Checks that refuse the run leave the destination as it was.
  auto refuse = [&](Error refusal) -> Error {
    files.undoCreation();
    return refusal;
  };
  Expected<FileDescriptor> staging = openDirectoryBeneath(
      files.root_.get(), files.directory_, kStagingDirectoryName, true);
  if (!staging.ok())
    return refuse(staging.error());
  files.staging_ = std::move(*staging);

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

  bool resuming = false;
  std::set<std::string> keptStagedFiles;
  if (Status loaded = files.loadJournals(options, resuming, keptStagedFiles);
      !loaded.ok())
    return refuse(loaded.error());
  if (Status checked = files.checkExistingFiles(options, resuming);
      !checked.ok())
    return refuse(checked.error());
  if (Status cleaned = files.removeUnkeptStagedFiles(keptStagedFiles);
      !cleaned.ok())
    return cleaned.error();
  std::string ownJournal =
      options.rank ? "journal." + std::to_string(*options.rank) : "journal";
  Expected<std::unique_ptr<RunJournal>> journal =
      RunJournal::open(files.stagingDirectory_ + "/" + ownJournal,
                       options.planFingerprint, files.staging_.get());
  if (!journal.ok())
    return journal.error();
  files.journal_ = std::move(*journal);
  return result;
}

Status DestinationFiles::loadJournals(const DestinationOptions &options,
                                      bool &resuming,
                                      std::set<std::string> &keptStagedFiles) {
  // The journals of an earlier run: a finished file counts when it is still
  // staged (or already moved into place by an interrupted install) with
  // the size and the tensor hashes a journal recorded. A rank reads the
  // local backend's journal and its own.
  std::vector<std::string> journals;
  if (rank_) {
    journals = {"journal", "journal." + std::to_string(*rank_)};
  } else {
    Expected<std::vector<std::string>> names =
        journalNames(staging_.get(), stagingDirectory_);
    if (!names.ok())
      return names.error();
    journals = std::move(*names);
  }
  for (const std::string &name : journals) {
    if (entryKind(staging_.get(), name) == EntryKind::Missing)
      continue;
    resuming = true;
    Expected<std::unique_ptr<RunJournal>> journal =
        RunJournal::open(stagingDirectory_ + "/" + name,
                         options.planFingerprint, staging_.get());
    if (!journal.ok())
      return journal.error();
    for (const FinishedFile &record : (*journal)->loaded()) {
      if (record.file >= files_.size() || !owns(record.file))
        continue;
      FileState &state = *files_[record.file];
      if (state.finished || record.tensorHashes.size() != state.tensors.size())
        continue;
      // Only regular files reached without links count.
      std::string name =
          splitPath(plan_.destinationFiles[record.file].path).second;
      Expected<FileDescriptor> staged = stagedDirectory(record.file, false);
      bool isStaged = staged.ok() && staged->isOpen() &&
                      entryKind(staged->get(), name) == EntryKind::File;
      if (!isStaged) {
        Expected<FileDescriptor> final = finalDirectory(record.file, false);
        if (!final.ok() || !final->isOpen() ||
            entryKind(final->get(), name) != EntryKind::File)
          continue;
      }
      if (!matchesRecord(isStaged ? stagedPath(record.file)
                                  : finalPath(record.file),
                         record, plan_, state.tensors))
        continue;
      state.finished = true;
      state.fileSize = record.size;
      state.tensorHashes = record.tensorHashes;
      if (isStaged)
        keptStagedFiles.insert(
            fs::path(plan_.destinationFiles[record.file].path)
                .lexically_normal()
                .string());
      ++resumedFiles_;
    }
  }
  return Status();
}

} // namespace aoa::runtime
