//===- DestinationFiles.h - The checkpoint a plan writes --------*- C++ -*-===//
//
// Destination files are built in a staging directory, DST/.aoa-run/files/,
// each one written through an atomic safetensors writer and committed (fsync,
// rename) as soon as its last byte arrives; the run journal then records it.
// Only when every file is finished are they moved into DST and metadata.json
// written (atomically, last), so DST never holds a partial checkpoint: a
// failed run leaves DST as it was, plus the staging directory that the next
// run of the same plan resumes from.
//
// aoa-run never follows a symbolic link inside DST: paths beneath it are
// resolved from a handle of DST one directory at a time (see
// runtime/storage/lib/DestinationDirectory.h), and a link found on the way is
// refused. DST may not lie inside the source directory nor contain it.
// One run at a time: DST/.aoa-run/lock is held (flock) from the start to
// the end of a run; a second run into the same DST refuses at once.
//
// Every stored tensor's xxh3-64 goes into metadata.json. Data written in
// order is hashed as it is written; tensors written out of order are hashed
// by reading the staged file back before it is committed.
//
// The mpi backend runs one process per rank, all sharing DST: one process
// first prepares the directory (prepareDirectory), then every rank opens
// its own files only (DestinationOptions::rank), with its own journal
// DST/.aoa-run/journal.RANK. Each rank moves its own finished files into
// DST (moveFilesIntoPlace); rank 0 writes metadata.json with every rank's
// hashes (writeMetadata) once all have succeeded. Node-local directories
// (RunOptions::nodeLocal) are the same steps with one DST per rank: each
// rank prepares its own, and after rank 0's writeMetadata the others
// remove their staging directories (removeStaging).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_DESTINATIONFILES_H
#define AOA_RUNTIME_STORAGE_DESTINATIONFILES_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/storage/AtomicFile.h"
#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/support/FileDescriptor.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace aoa::runtime {

struct SourceRun;

class RunJournal;
class SafetensorsWriter;
class ThreadPool;

struct DestinationOptions {
  /// Replace files (and metadata.json) that already exist in the
  /// destination directory; otherwise that is an error.
  bool overwrite = false;
  /// Discard the journal and staged files of an earlier run of this plan
  /// instead of resuming from them.
  bool restart = false;
  /// Identifies the plan (a hash of its text) in the journal.
  uint64_t planFingerprint = 0;
  /// Fail once this many files were finished by this run (0 = never); see
  /// RunOptions::stopAfterFiles.
  uint32_t stopAfterFiles = 0;
  /// The mpi backend: this process is this rank and handles only the
  /// destination files the plan gives it ("its files" below), journaling
  /// them in DST/.aoa-run/journal.RANK; prepareDirectory must have run.
  /// Unset (the local backend): every file, journal DST/.aoa-run/journal.
  std::optional<uint32_t> rank;
};

/// What prepareDirectory leaves for the run.
struct PreparedDestination {
  /// Whether it created the destination directory, and the staging
  /// directory DST/.aoa-run (for a refusal to remove again).
  bool created = false;
  bool createdStaging = false;
  /// The destination's lock (DST/.aoa-run/lock), held while this is open.
  FileDescriptor lock;
};

class DestinationFiles {
public:
  /// Prepares the destination directory (created when missing) and the
  /// staging directory, loads the journal of an earlier run of this plan,
  /// and checks that nothing would be overwritten and that no destination is
  /// a source file.
  static Expected<std::unique_ptr<DestinationFiles>>
  open(const plan::Plan &plan, const std::string &destinationDirectory,
       const std::string &sourceDirectory, const DestinationOptions &options);
  ~DestinationFiles();

  /// What open() does first for the whole directory, before looking at
  /// files: refuses a destination inside the source directory or around
  /// it, creates the destination when missing, takes its lock, refuses an
  /// existing metadata.json (unless overwrite), with restart removes the
  /// staging directory's contents, and refuses journals of another plan.
  /// Run by one process only, which holds the returned lock for the whole
  /// run; open() runs it itself unless options.rank is set.
  static Expected<PreparedDestination>
  prepareDirectory(const std::string &destinationDirectory,
                   const std::string &sourceDirectory,
                   const DestinationOptions &options);

  /// Whether another process holds the lock of `destinationDirectory` now
  /// (so its staging directory is that run's, not one to resume).
  static bool isLockedByAnotherRun(const std::string &destinationDirectory);

  /// Files finished by an earlier run (resumed) or by this one so far.
  std::vector<bool> finishedFiles() const;
  size_t resumedFileCount() const { return resumedFiles_; }
  /// Data bytes of the files still to write when the run started.
  uint64_t bytesToWrite() const { return bytesToWrite_; }
  /// Data bytes written by this run so far (for progress).
  const std::atomic<uint64_t> &bytesWritten() const { return bytesWritten_; }

  /// Writes `region` (in the key's coordinates) of destination tensor
  /// `tensor` from the dense row-major `data`. Thread-safe for disjoint
  /// regions. The write that completes a file commits it.
  Status writeRegion(uint32_t tensor, const Box &region, const void *data);
  /// As writeRegion, with the region's bytes taken from files:
  /// `sourceRuns` tile its dense row-major bytes in order, and each piece
  /// where a source run meets a run of the region in the tensor is copied
  /// inside the kernel (SafetensorsWriter::copyFromFile). The tensor is
  /// hashed by reading the staged file back.
  Status writeRegionFromFile(uint32_t tensor, const Box &region,
                             const std::vector<SourceRun> &sourceRuns);

  /// Commits the files that hold no data bytes (nothing writes them).
  Status finishEmptyFiles();

  /// Moves every finished file into the destination directory and writes
  /// metadata.json; fails when a file is unfinished.
  Status install();
  /// install()'s first step: moves its files into the destination
  /// directory; fails when one is unfinished.
  Status moveFilesIntoPlace();
  /// By destination tensor: the xxh3 of each tensor of its finished files,
  /// 0 for the others.
  std::vector<uint64_t> tensorHashes() const;
  /// install()'s last step: copies the plan's copied files from the source
  /// directory and writes a Hugging Face destination's index, then writes
  /// metadata.json with `hashes` (by destination tensor), last, and removes
  /// the staging directory.
  Status writeMetadata(const std::vector<uint64_t> &hashes);
  /// writeMetadata's last step, for a rank with a destination directory of
  /// its own (node-local) once rank 0 has written metadata.json in its
  /// own: removes the staging directory.
  Status removeStaging();

  /// After a failed run: when no file is finished, removes the staging
  /// directory (and the destination directory if this run created it and
  /// it is empty), so that a failure leaves nothing behind. Finished files
  /// are kept for the next run to resume from.
  void cleanUpAfterFailure();
  /// cleanUpAfterFailure's steps, for the mpi backend where only the ranks
  /// together know whether any file is finished:
  bool anyFileFinished() const;
  /// Unfinished files remove their temporaries; the journal is closed.
  void releaseUnfinishedFiles();
  /// Removes the staging directory, and the destination directory too when
  /// `removeDestination` and it is then empty.
  static void removeStagingDirectory(const std::string &destinationDirectory,
                                     bool removeDestination);

  /// Re-reads every installed file (its header, then its tensors' bytes,
  /// from disk where the system allows) and checks each tensor's hash.
  Status verify(ThreadPool &pool) const;

private:
  struct FileState;
  explicit DestinationFiles(const plan::Plan &plan);
  /// Creates the file's staged writer; the file's mutex is held.
  Status openWriter(uint32_t file);
  Status finishFile(uint32_t file);
  /// A write's first step: the writer of `tensor`'s file, created by the
  /// first write; fails once the file is complete.
  Expected<SafetensorsWriter *> writerFor(uint32_t tensor, const Box &region);
  /// Hashes bytes [offset, offset + size) of `tensor` when they continue
  /// its hashed prefix (otherwise it is hashed when its file is finished).
  void hashInOrder(uint32_t tensor, uint64_t offset, const void *data,
                   uint64_t size);
  /// A write's last step: counts its bytes; the write that completes the
  /// file commits it.
  Status countWritten(uint32_t tensor, uint64_t bytes);
  /// The copied files and the Hugging Face index (writeMetadata's first
  /// step), each atomically.
  Status installCompanions() const;
  /// Where installCompanions and writeMetadata write: in `directoryFd`,
  /// through temporaries in the staging directory.
  AtomicFileLocation temporariesInStaging(int directoryFd) const;
  /// open()'s steps: the journals of an earlier run (which files are
  /// finished), the checks of what exists in DST, and the removal of
  /// staged files that cannot be resumed.
  Status loadJournals(const DestinationOptions &options, bool &resuming,
                      std::set<std::string> &keptStagedFiles);
  Status checkExistingFiles(const DestinationOptions &options, bool resuming);
  /// checkExistingFiles' halves: the plan's destination files of this rank,
  /// then what install() adds beside them (copied files, the index).
  Status checkDestinationFiles(const DestinationOptions &options);
  Status checkCompanionFiles(const DestinationOptions &options, bool resuming);
  Status removeUnkeptStagedFiles(const std::set<std::string> &kept);
  /// Before the first file moves into place: removes the metadata.json of
  /// a checkpoint being overwritten (and its Hugging Face index, when this
  /// run writes one), durably, so that DST never shows them beside a mix of
  /// new and old files.
  Status removeOldMetadata();
  /// Removes what a refused open() created (nothing else).
  void undoCreation();
  std::string stagedPath(uint32_t file) const;
  std::string finalPath(uint32_t file) const;
  /// The directory holding the destination file `file`, staged (beneath
  /// DST/.aoa-run/files) or final (beneath DST), opened without following
  /// links: created when `create`, otherwise closed when missing.
  Expected<FileDescriptor> stagedDirectory(uint32_t file, bool create) const;
  Expected<FileDescriptor> finalDirectory(uint32_t file, bool create) const;
  /// Whether the destination has a Hugging Face index (a Hugging Face
  /// model split over several files).
  bool writesHuggingFaceIndex() const;
  /// Whether this process handles `file` (see DestinationOptions::rank).
  bool owns(uint32_t file) const {
    return !rank_ || plan_.destinationFiles[file].rank == *rank_;
  }

  const plan::Plan &plan_;
  std::string directory_;
  std::string stagingDirectory_;
  std::string sourceDirectory_;
  FileDescriptor root_;    ///< DST
  FileDescriptor staging_; ///< DST/.aoa-run
  FileDescriptor lock_;    ///< held when this process prepared DST
  std::unique_ptr<RunJournal> journal_;
  std::vector<std::unique_ptr<FileState>> files_;
  /// By destination tensor: its position among its file's tensors.
  std::vector<uint32_t> positionInFile_;
  std::optional<uint32_t> rank_;
  bool createdDirectory_ = false;
  bool createdStaging_ = false;
  size_t resumedFiles_ = 0;
  uint32_t stopAfterFiles_ = 0;
  std::atomic<uint32_t> filesFinished_{0};
  uint64_t bytesToWrite_ = 0;
  std::atomic<uint64_t> bytesWritten_{0};
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_DESTINATIONFILES_H
