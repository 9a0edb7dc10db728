//===- DestinationFilesInstall.cpp - Moving a finished run into place -----===//
//
// DestinationFiles::install (see DestinationFiles.h): the finished files move
// from staging into DST, the old metadata of an overwritten checkpoint is
// removed first, and the copied files, the Hugging Face index and
// metadata.json are written through temporaries in staging.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/DestinationFiles.h"

#include "DestinationDirectory.h"
#include "DestinationFileState.h"
#include "FileSystemSupport.h"
#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/ir/HuggingFaceIndex.h"
#include "aoa/runtime/storage/AtomicFile.h"
#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/support/FaultInjection.h"
#include "aoa/runtime/support/FileDescriptor.h"
#include "aoa/runtime/support/Messages.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <map>
#include <sstream>
#include <unistd.h>

namespace aoa::runtime {

Status DestinationFiles::install() {
  if (Status moved = moveFilesIntoPlace(); !moved.ok())
    return moved;
  return writeMetadata(tensorHashes());
}

Status DestinationFiles::moveFilesIntoPlace() {
  for (uint32_t f = 0; f < files_.size(); ++f) {
    FileState &file = *files_[f];
    if (owns(f) && !file.finished)
      return Error{
          "destination file '" + plan_.destinationFiles[f].path +
              "' is incomplete: " + std::to_string(file.remainingBytes.load()) +
              " of its " + std::to_string(file.dataBytes) +
              " data bytes were never written",
          "the plan does not write every destination element; "
          "recompile it"};
  }
  if (Status removed = removeOldMetadata(); !removed.ok())
    return removed;
  // Renamed by handles: neither end is reached through a link.
  std::map<std::string, FileDescriptor> targetDirectories;
  for (uint32_t f = 0; f < files_.size(); ++f) {
    if (!owns(f))
      continue;
    std::string relative = plan_.destinationFiles[f].path;
    std::string name = splitPath(relative).second;
    Expected<FileDescriptor> from = stagedDirectory(f, false);
    if (!from.ok())
      return from.error();
    if (!from->isOpen() || entryKind(from->get(), name) == EntryKind::Missing)
      continue; // moved by an earlier, interrupted install
    Expected<FileDescriptor> to = finalDirectory(f, true);
    if (!to.ok())
      return Error{"destination file " + quoteName(relative) +
                       " cannot be moved into place: " + to.error().message,
                   to.error().hint};
    if (injectedFault(FaultPoint::Rename) ||
        ::renameat(from->get(), name.c_str(), to->get(), name.c_str()) != 0)
      return Error{"cannot move " + quoteName(stagedPath(f)) + " to " +
                       quoteName(finalPath(f)) + ": " + errnoText(errno),
                   kSystemErrorHint};
    // DST itself is synced below.
    if (std::string parent = splitPath(relative).first; parent != ".")
      targetDirectories.emplace(parent, std::move(*to));
  }
  // New subdirectories are entries of DST.
  if (Status synced = syncDirectory(root_.get(), directory_); !synced.ok())
    return synced;
  for (const auto &[relative, fd] : targetDirectories)
    if (Status synced = syncDirectory(fd.get(), directory_ + "/" + relative);
        !synced.ok())
      return synced;
  return Status();
}

Status DestinationFiles::removeOldMetadata() {
  // The index too, when this run writes one: a Hugging Face loader reads it.
  std::vector<const char *> names = {"metadata.json"};
  if (writesHuggingFaceIndex())
    names.push_back(plan::kHuggingFaceIndexName);
  bool removed = false;
  for (const char *name : names) {
    if (::unlinkat(root_.get(), name, 0) == 0) {
      removed = true;
    } else if (errno != ENOENT) {
      return Error{"cannot remove the " + std::string(name) +
                       " of the checkpoint being replaced in " +
                       quoteName(directory_) + ": " + errnoText(errno),
                   kSystemErrorHint};
    }
  }
  return removed ? syncDirectory(root_.get(), directory_) : Status();
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

AtomicFileLocation
DestinationFiles::temporariesInStaging(int directoryFd) const {
  // A run killed mid-write leaves the temporary in the staging directory,
  // which the next run cleans, never a stray .NAME.tmp.* in DST.
  return AtomicFileLocation{directoryFd, staging_.get(), stagingDirectory_};
}

Status DestinationFiles::installCompanions() const {
  for (const std::string &path : plan_.copiedFiles) {
    Expected<FileDescriptor> directory =
        openParentBeneath(root_.get(), directory_, path, true);
    if (!directory.ok())
      return directory.error();
    if (Status copied = copyFileAtomically(
            sourceDirectory_ + "/" + path, directory_ + "/" + path,
            temporariesInStaging(directory->get()));
        !copied.ok())
      return copied;
  }
  if (!writesHuggingFaceIndex())
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
      temporariesInStaging(root_.get()));
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
        tensorsOfKey.try_emplace(plan_.destinationTensors[t].key.str());
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
      std::optional<ShardId> shard = builder.addShard(
          file.rank, file.path, tensor.name, tensor.box.offsets(),
          tensor.box.shape(), tensor.flat);
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
                              temporariesInStaging(root_.get()));
      !written.ok()) {
    // It may have failed after its rename (syncing the directory): a failed
    // run leaves no metadata.json, or the same command would not resume.
    ::unlinkat(root_.get(), "metadata.json", 0);
    return written;
  }
  return removeStaging();
}

Status DestinationFiles::removeStaging() {
  if (Status removed =
          removeTree(root_.get(), directory_, kStagingDirectoryName);
      !removed.ok())
    return Error{"the checkpoint is complete, but " + removed.error().message,
                 removed.error().hint};
  return Status();
}

} // namespace aoa::runtime
