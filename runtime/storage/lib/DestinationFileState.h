//===- DestinationFileState.h - One file being written ----------*- C++ -*-===//
//
// Private to the runtime library: what DestinationFiles keeps for each
// destination file, shared by DestinationFiles.cpp, DestinationFilesOpen.cpp
// and DestinationFilesExisting.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_LIB_DESTINATIONFILESTATE_H
#define AOA_RUNTIME_STORAGE_LIB_DESTINATIONFILESTATE_H

#include "aoa/runtime/storage/DestinationFiles.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/support/ContentHash.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace aoa::runtime {

/// Hashing state of one tensor while its file is written.
struct TensorProgress {
  std::mutex mutex;
  std::unique_ptr<ContentHasher> hasher; ///< created by the first write
  uint64_t hashedBytes = 0;              ///< a prefix of the tensor's bytes
};

struct DestinationFiles::FileState {
  std::mutex mutex;
  std::vector<uint32_t> tensors; ///< destination tensor ids, in plan order
  uint64_t dataBytes = 0;
  std::atomic<int64_t> remainingBytes{0};
  std::optional<SafetensorsWriter> writer;
  std::unique_ptr<TensorProgress[]> progress;
  std::atomic<bool> finished{false};
  uint64_t fileSize = 0;              ///< once finished
  std::vector<uint64_t> tensorHashes; ///< once finished
};

/// The error for an existing directory where aoa-run writes a file itself
/// (metadata.json, the index); in DestinationFilesExisting.cpp.
Error directoryInTheWayOf(const std::string &path, const std::string &what);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_LIB_DESTINATIONFILESTATE_H
