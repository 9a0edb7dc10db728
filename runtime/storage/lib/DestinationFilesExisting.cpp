//===- DestinationFilesExisting.cpp - What DST and staging already hold ---===//
//
// DestinationFiles::open's checks of what already exists (see
// DestinationFiles.h): destination files that would be overwritten or are
// files of the source, what install() adds beside them, and the staged files
// of an interrupted run that cannot be resumed, which are removed. Paths
// beneath DST are resolved by handle (DestinationDirectory.h).
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/DestinationFiles.h"

#include "DestinationDirectory.h"
#include "DestinationFileState.h"
#include "FileSystemSupport.h"
#include "aoa/ir/HuggingFaceIndex.h"
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

constexpr const char *kDirectoryInTheWayHint =
    "move the directory away, or choose another destination directory";

/// The identity of an existing file, for "is this a source file?".
std::optional<std::pair<dev_t, ino_t>> fileIdentity(const std::string &path) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0)
    return std::nullopt;
  return std::make_pair(status.st_dev, status.st_ino);
}

/// What is at `relative` beneath `root` (not following a link at its end);
/// an error, naming the plan's `what`, when something on the way is not a
/// directory.
Expected<EntryKind> existingEntry(int root, const std::string &rootPath,
                                  const std::string &relative,
                                  const std::string &what) {
  Expected<FileDescriptor> parent =
      openParentBeneath(root, rootPath, relative, false);
  if (!parent.ok())
    return Error{what + " " + quoteName(relative) +
                     " cannot be written: " + parent.error().message,
                 parent.error().hint};
  if (!parent->isOpen())
    return EntryKind::Missing;
  return entryKind(parent->get(), splitPath(relative).second);
}

/// The error for an existing directory where a file must go.
Error directoryInTheWay(const std::string &what, const std::string &relative,
                        const std::string &path) {
  return Error{what + " " + quoteName(relative) +
                   " cannot be written: " + quoteName(path) + " is a directory",
               kDirectoryInTheWayHint};
}

} // namespace

Error directoryInTheWayOf(const std::string &path, const std::string &what) {
  return Error{quoteName(path) + " is a directory, but aoa-run writes " + what +
                   " there",
               kDirectoryInTheWayHint};
}

Status DestinationFiles::checkExistingFiles(const DestinationOptions &options,
                                            bool resuming) {
  if (Status files = checkDestinationFiles(options); !files.ok())
    return files.error();
  // Only rank 0 installs what goes beside the files.
  if (rank_ && *rank_ != 0)
    return Status();
  return checkCompanionFiles(options, resuming);
}

Status
DestinationFiles::checkDestinationFiles(const DestinationOptions &options) {
  // Never overwrite by accident, and never a source file. What is there is
  // looked at without following links: a link is what a rename replaces.
  std::set<std::pair<dev_t, ino_t>> sources;
  for (const plan::File &file : plan_.sourceFiles)
    if (auto identity = fileIdentity(sourceDirectory_ + "/" + file.path))
      sources.insert(*identity);
  for (uint32_t f = 0; f < files_.size(); ++f) {
    if (!owns(f))
      continue;
    FileState &state = *files_[f];
    const std::string &relative = plan_.destinationFiles[f].path;
    std::string target = finalPath(f);
    Expected<EntryKind> kind =
        existingEntry(root_.get(), directory_, relative, "destination file");
    if (!kind.ok())
      return kind.error();
    if (*kind == EntryKind::Directory)
      return directoryInTheWay("destination file", relative, target);
    std::optional<std::pair<dev_t, ino_t>> identity;
    struct stat status;
    if (*kind != EntryKind::Missing && ::lstat(target.c_str(), &status) == 0)
      identity = std::make_pair(status.st_dev, status.st_ino);
    if (identity && sources.count(*identity))
      return Error{"destination file " + quoteName(target) +
                       " is a file of the source checkpoint",
                   "write the converted checkpoint to another "
                   "directory; aoa-run never modifies a source "
                   "checkpoint"};
    if (identity && !state.finished && !options.overwrite)
      return Error{"destination file " + quoteName(target) + " already exists",
                   "choose an empty directory, or pass --overwrite "
                   "to replace it"};
    if (!state.finished) {
      state.remainingBytes = int64_t(state.dataBytes);
      bytesToWrite_ += state.dataBytes;
    }
  }
  return Status();
}

Status DestinationFiles::checkCompanionFiles(const DestinationOptions &options,
                                             bool resuming) {
  // What install() adds beside the files (rank 0 installs it): the copied
  // files must be there to copy, and nothing may be replaced by accident
  // (an install that an interruption cut short may have written them).
  std::error_code error;
  for (const std::string &path : plan_.copiedFiles) {
    std::string from = sourceDirectory_ + "/" + path;
    if (!fs::is_regular_file(from, error))
      return Error{"cannot copy " + quoteName(path) +
                       ": it is not a file in the source directory " +
                       quoteName(sourceDirectory_),
                   "the plan copies the source checkpoint's other "
                   "files (config.json, tokenizer files, ...); "
                   "run it on the directory it was compiled from"};
    Expected<EntryKind> kind =
        existingEntry(root_.get(), directory_, path, "copied file");
    if (!kind.ok())
      return kind.error();
    if (*kind == EntryKind::Directory)
      return directoryInTheWay("copied file", path, directory_ + "/" + path);
    if (!options.overwrite && !resuming && *kind != EntryKind::Missing)
      return Error{"destination file " + quoteName(directory_ + "/" + path) +
                       " already exists",
                   "choose an empty directory, or pass --overwrite "
                   "to replace it"};
  }
  if (!writesHuggingFaceIndex())
    return Status();
  EntryKind index = entryKind(root_.get(), plan::kHuggingFaceIndexName);
  if (index == EntryKind::Directory)
    return directoryInTheWayOf(directory_ + "/" + plan::kHuggingFaceIndexName,
                               "the Hugging Face index");
  if (!options.overwrite && !resuming && index != EntryKind::Missing)
    return Error{"the destination directory " + quoteName(directory_) +
                     " already holds a Hugging Face index (" +
                     plan::kHuggingFaceIndexName + ")",
                 "choose an empty directory, or pass --overwrite "
                 "to replace it"};
  return Status();
}

namespace {

/// Removes, beneath the open staging directory `directory` (shown as `path`,
/// at `relative` beneath files/), every entry but the directories and the
/// files in `kept`; links are removed, never followed.
Status removeUnkeptBeneath(int directory, const std::string &path,
                           const std::string &relative,
                           const std::set<std::string> &kept) {
  Expected<std::vector<std::pair<std::string, EntryKind>>> entries =
      listDirectory(directory, path);
  if (!entries.ok())
    return entries.error();
  for (const auto &[name, kind] : *entries) {
    std::string inner = relative.empty() ? name : relative + "/" + name;
    if (kind == EntryKind::Directory) {
      Expected<FileDescriptor> child =
          openDirectoryBeneath(directory, path, name, false);
      if (!child.ok())
        return child.error();
      if (!child->isOpen())
        continue;
      if (Status removed =
              removeUnkeptBeneath(child->get(), path + "/" + name, inner, kept);
          !removed.ok())
        return removed;
    } else if (!kept.count(inner) &&
               ::unlinkat(directory, name.c_str(), 0) != 0 && errno != ENOENT) {
      return Error{"cannot remove " + quoteName(path + "/" + name) + ": " +
                       errnoText(errno),
                   kSystemErrorHint};
    }
  }
  return Status();
}

} // namespace

Status
DestinationFiles::removeUnkeptStagedFiles(const std::set<std::string> &kept) {
  // Staging: partial files of an interrupted run are useless. A rank
  // removes only its own (staged names and their temporaries, .NAME.tmp.*).
  std::string stagedFiles = stagingDirectory_ + "/files";
  Expected<FileDescriptor> files =
      openDirectoryBeneath(staging_.get(), stagingDirectory_, "files", true);
  if (!files.ok())
    return files.error();
  if (!rank_)
    return removeUnkeptBeneath(files->get(), stagedFiles, "", kept);
  std::map<std::string, std::set<std::string>> ownNames;
  for (uint32_t f = 0; f < files_.size(); ++f)
    if (owns(f)) {
      auto [parent, name] = splitPath(
          fs::path(plan_.destinationFiles[f].path).lexically_normal().string());
      ownNames[parent].insert(name);
    }
  for (const auto &[parent, names] : ownNames) {
    Expected<FileDescriptor> directory =
        openDirectoryBeneath(files->get(), stagedFiles, parent, false);
    if (!directory.ok())
      return directory.error();
    if (!directory->isOpen())
      continue;
    std::string shown = stagedFiles + "/" + parent;
    Expected<std::vector<std::pair<std::string, EntryKind>>> entries =
        listDirectory(directory->get(), shown);
    if (!entries.ok())
      return entries.error();
    for (const auto &[name, kind] : *entries) {
      if (kind == EntryKind::Directory)
        continue;
      size_t tmp = name.rfind(".tmp.");
      bool ours = names.count(name) || (name.size() > 1 && name[0] == '.' &&
                                        tmp != std::string::npos && tmp > 1 &&
                                        names.count(name.substr(1, tmp - 1)));
      std::string relative = parent == "." ? name : parent + "/" + name;
      if (ours && !kept.count(relative) &&
          ::unlinkat(directory->get(), name.c_str(), 0) != 0 && errno != ENOENT)
        return Error{"cannot remove " + quoteName(shown + "/" + name) + ": " +
                         errnoText(errno),
                     kSystemErrorHint};
    }
  }
  return Status();
}

} // namespace aoa::runtime
