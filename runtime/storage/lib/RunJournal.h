//===- RunJournal.h - Finished destination files of a run -------*- C++ -*-===//
//
// An interrupted aoa-run resumes without redoing finished files. Each
// destination file, once committed in the staging directory, is appended to
// the journal with its size and the content hash of each of its tensors, and
// the journal is flushed to disk before the run goes on. The journal names
// the plan it belongs to (a hash of the plan text), so a different plan
// never resumes from it.
//
// Text, one record per line:
//   aoa-run-journal 1
//   plan 5d2f8c1e0a7b3c44
//   file 3 size 123456 xxh3 2d06800538d394c2 0f5e... (one per tensor)
// A last line without its newline is a record torn by a crash: ignored.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_RUNJOURNAL_H
#define AOA_RUNTIME_STORAGE_RUNJOURNAL_H

#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/support/FileDescriptor.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace aoa::runtime {

struct FinishedFile {
  uint32_t file = 0;  ///< into Plan::destinationFiles
  uint64_t size = 0;  ///< bytes of the whole safetensors file
  /// Of the file's tensors, in the order of Plan::destinationTensors.
  std::vector<uint64_t> tensorHashes;
};

class RunJournal {
public:
  /// Opens the journal at `path` for the plan with `planFingerprint`,
  /// loading its records, or creates it. A journal of another plan, or one
  /// that is not a journal, is an error (the caller decides whether to
  /// start over). A symbolic link at `path` is refused, never followed.
  /// With `directoryFd` (an open directory, -1 for none) the journal is
  /// `path`'s last component relative to it; `path` is for messages.
  static Expected<std::unique_ptr<RunJournal>>
  open(const std::string &path, uint64_t planFingerprint, int directoryFd = -1);

  RunJournal(const RunJournal &) = delete;
  RunJournal &operator=(const RunJournal &) = delete;

  const std::string &path() const { return path_; }
  /// The records loaded when the journal was opened.
  const std::vector<FinishedFile> &loaded() const { return loaded_; }

  /// Appends a record and flushes it to disk. Thread-safe.
  Status record(const FinishedFile &file);

private:
  RunJournal() = default;
  std::string path_;
  FileDescriptor file_;
  std::vector<FinishedFile> loaded_;
  std::mutex mutex_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_RUNJOURNAL_H
