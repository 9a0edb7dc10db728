//===- DirectoryListing.cpp -----------------------------------------------===//
#include "DirectoryListing.h"

#include "Text.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

namespace aoa::formats {

namespace {

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

} // namespace

Expected<std::vector<DirectoryEntry>>
listDirectory(const std::string &directory) {
  struct stat status;
  if (::stat(directory.c_str(), &status) != 0) {
    int error = errno;
    return Error{directory + ": " + std::strerror(error),
                 "pass a checkpoint directory: aoa's output (metadata.json), "
                 "a Hugging Face model directory or a directory of "
                 "*.safetensors files"};
  }
  if (!S_ISDIR(status.st_mode))
    return Error{directory + ": not a directory",
                 "pass a checkpoint directory: aoa's output (metadata.json), "
                 "a Hugging Face model directory or a directory of "
                 "*.safetensors files"};
  DIR *stream = ::opendir(directory.c_str());
  if (!stream) {
    int error = errno;
    return Error{directory +
                     ": cannot list the directory: " + std::strerror(error),
                 "check the directory's permissions"};
  }
  std::vector<DirectoryEntry> entries;
  errno = 0;
  while (const dirent *item = ::readdir(stream)) {
    std::string_view name = item->d_name;
    if (name.empty() || name.front() == '.')
      continue;
    DirectoryEntry entry;
    entry.name = std::string(name);
    std::string path = joinPath(directory, name);
    struct stat target;
    if (::stat(path.c_str(), &target) == 0) {
      entry.regularFile = S_ISREG(target.st_mode);
    } else {
      struct stat link;
      entry.brokenLink =
          ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
    }
    entries.push_back(std::move(entry));
    errno = 0;
  }
  int error = errno;
  ::closedir(stream);
  if (error)
    return Error{directory +
                     ": cannot list the directory: " + std::strerror(error),
                 "check the disk and the file system, then retry"};
  std::sort(entries.begin(), entries.end(),
            [](const DirectoryEntry &a, const DirectoryEntry &b) {
              return a.name < b.name;
            });
  return entries;
}

const DirectoryEntry *findEntry(const std::vector<DirectoryEntry> &entries,
                                std::string_view name) {
  auto at =
      std::lower_bound(entries.begin(), entries.end(), name,
                       [](const DirectoryEntry &entry, std::string_view key) {
                         return entry.name < key;
                       });
  return at != entries.end() && at->name == name ? &*at : nullptr;
}

bool isWeightFileName(std::string_view name) {
  for (std::string_view suffix :
       {".safetensors", ".index.json", ".pt", ".pth", ".ckpt", ".h5",
        ".msgpack", ".gguf", ".pdparams", ".pdopt"})
    if (endsWith(name, suffix))
      return true;
  return startsWith(name, "pytorch_model") && endsWith(name, ".bin");
}

void classifyOtherFiles(CheckpointDirectory &checkpoint,
                        const std::vector<DirectoryEntry> &entries) {
  checkpoint.otherFiles.clear();
  checkpoint.ignoredFiles.clear();
  // tensorFiles is sorted.
  for (const DirectoryEntry &entry : entries) {
    if (!entry.regularFile && !entry.brokenLink)
      continue;
    if (entry.name == checkpoint.descriptionFile ||
        std::binary_search(checkpoint.tensorFiles.begin(),
                           checkpoint.tensorFiles.end(), entry.name))
      continue;
    (isWeightFileName(entry.name) ? checkpoint.ignoredFiles
                                  : checkpoint.otherFiles)
        .push_back(entry.name);
  }
}

} // namespace aoa::formats
