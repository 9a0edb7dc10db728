//===- FileSystemSupport.h - Paths, temporaries and their errors -*- C++ -*-===//
//
// Private to the runtime library: what the safetensors writer, the atomic
// file writer and the destination staging share about creating files.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_LIB_FILESYSTEMSUPPORT_H
#define AOA_RUNTIME_STORAGE_LIB_FILESYSTEMSUPPORT_H

#include <cstdint>
#include <string>
#include <utility>

namespace aoa::runtime {

/// The hint for a failed write or reservation, by cause (ENOSPC, EDQUOT, …).
std::string writeFailureHint(int errnoValue);

/// The hint for a failed creation of a file, by cause.
std::string createFailureHint(int errnoValue);

/// A number that differs between processes, calls and attempts, for
/// temporary names created with O_EXCL.
uint64_t temporarySuffix(int attempt);

/// Splits a path into its directory ("." when there is none) and file name.
std::pair<std::string, std::string> splitPath(const std::string &path);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_LIB_FILESYSTEMSUPPORT_H
