//===- RunJournal.cpp -----------------------------------------------------===//
#include "RunJournal.h"

#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/support/FaultInjection.h"
#include "aoa/runtime/support/Messages.h"

#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa::runtime {

namespace {

constexpr const char *kMagic = "aoa-run-journal 1";

std::string startOverHint(const std::string &path) {
  return "remove " + quoteName(path) +
         " (or run aoa-run with --restart) to convert from scratch";
}

bool parseUnsigned(std::string_view text, uint64_t &value) {
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

std::vector<std::string_view> splitWords(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ')
      ++i;
    size_t begin = i;
    while (i < line.size() && line[i] != ' ')
      ++i;
    if (i > begin)
      words.push_back(line.substr(begin, i - begin));
  }
  return words;
}

/// Parses "file F size S xxh3 H...".
bool parseRecord(std::string_view line, FinishedFile &record) {
  std::vector<std::string_view> words = splitWords(line);
  uint64_t file = 0;
  if (words.size() < 5 || words[0] != "file" || words[2] != "size" ||
      words[4] != "xxh3" || !parseUnsigned(words[1], file) ||
      file > UINT32_MAX || !parseUnsigned(words[3], record.size))
    return false;
  record.file = uint32_t(file);
  for (size_t i = 5; i < words.size(); ++i) {
    std::optional<uint64_t> hash = parseContentHash(words[i]);
    if (!hash)
      return false;
    record.tensorHashes.push_back(*hash);
  }
  return true;
}

Status writeAll(int fd, const std::string &text, const std::string &path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = injectedFault(FaultPoint::Write)
                    ? -1
                    : ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Error{"writing the run journal " + quoteName(path) +
                       " failed: " + errnoText(errno),
                   kSystemErrorHint};
    done += size_t(n);
  }
  if (injectedFault(FaultPoint::Fsync) || ::fsync(fd) != 0)
    return Error{"flushing the run journal " + quoteName(path) +
                     " failed: " + errnoText(errno),
                 kSystemErrorHint};
  return Status();
}

} // namespace

Expected<std::unique_ptr<RunJournal>> RunJournal::open(const std::string &path,
                                                       uint64_t planFingerprint,
                                                       int directoryFd) {
  std::unique_ptr<RunJournal> journal(new RunJournal());
  journal->path_ = path;
  std::string name = path;
  if (directoryFd >= 0)
    name = name.substr(name.rfind('/') + 1);
  journal->file_ = FileDescriptor(
      ::openat(directoryFd >= 0 ? directoryFd : AT_FDCWD, name.c_str(),
               O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666));
  if (!journal->file_.isOpen()) {
    int error = errno;
    if (error == ELOOP)
      return Error{"the run journal " + quoteName(path) +
                       " is a symbolic link; aoa-run never follows one "
                       "inside the destination directory",
                   startOverHint(path)};
    return Error{"cannot open the run journal " + quoteName(path) + ": " +
                     errnoText(error),
                 kSystemErrorHint};
  }
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = injectedFault(FaultPoint::Read)
                    ? -1
                    : ::read(journal->file_.get(), chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Error{"reading the run journal " + quoteName(path) + " failed: " +
                       errnoText(errno),
                   kSystemErrorHint};
    if (n == 0)
      break;
    text.append(chunk, size_t(n));
  }
  std::string planLine = "plan " + formatContentHash(planFingerprint);
  if (text.empty()) {
    Status started = writeAll(journal->file_.get(),
                              std::string(kMagic) + "\n" + planLine + "\n", path);
    if (!started.ok())
      return started.error();
    return journal;
  }
  // Whole lines only: a torn last record is dropped.
  size_t lineNumber = 0, begin = 0;
  for (size_t end; (end = text.find('\n', begin)) != std::string::npos;
       begin = end + 1) {
    std::string_view line(text.data() + begin, end - begin);
    ++lineNumber;
    auto corrupt = [&]() -> Error {
      return Error{quoteName(path) + ":" + std::to_string(lineNumber) +
                       ": not a valid run journal record: '" +
                       std::string(line.substr(0, 80)) + "'",
                   startOverHint(path)};
    };
    if (lineNumber == 1) {
      if (line != kMagic)
        return corrupt();
    } else if (lineNumber == 2) {
      if (line.substr(0, 5) != "plan ")
        return corrupt();
      if (line != planLine)
        return Error{"the run journal " + quoteName(path) +
                         " belongs to another plan (" +
                         std::string(line.substr(5)) + ", this plan is " +
                         formatContentHash(planFingerprint) + ")",
                     startOverHint(path)};
    } else {
      FinishedFile record;
      if (!parseRecord(line, record))
        return corrupt();
      journal->loaded_.push_back(std::move(record));
    }
  }
  if (lineNumber < 2)
    return Error{quoteName(path) + " is not a run journal (it has no header)",
                 startOverHint(path)};
  if (begin != text.size()) {
    // Cut the torn record off, so the next one starts on a fresh line.
    if (::ftruncate(journal->file_.get(), off_t(begin)) != 0)
      return Error{"cannot repair the run journal " + quoteName(path) + ": " +
                       errnoText(errno),
                   startOverHint(path)};
  }
  return journal;
}

Status RunJournal::record(const FinishedFile &file) {
  std::string line = "file " + std::to_string(file.file) + " size " +
                     std::to_string(file.size) + " xxh3";
  for (uint64_t hash : file.tensorHashes)
    line += " " + formatContentHash(hash);
  line += "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  return writeAll(file_.get(), line, path_);
}

} // namespace aoa::runtime
