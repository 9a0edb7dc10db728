//===- NcclLibrary.h - NCCL, loaded at run time with dlopen -----*- C++ -*-===//
//
// Private to the runtime library's CUDA part. libnccl is not linked: a
// linked libnccl.so.2 would have to be on the loader path for aoa-run (and
// every test binary) to start at all, even for --backend=local. Instead the
// nccl backend loads it when a job starts and calls NCCL through a table of
// the functions NcclJob.cpp uses. nccl.h still gives the types and the
// signatures (the table's entries are decltype(&::ncclSend) and so on).
//
// Where NCCL comes from: $AOA_NCCL_LIBRARY (a path or a file name) when it
// is set and not empty, and then only there (a wrong path is reported, not
// replaced by another NCCL); otherwise libnccl.so.2, then libnccl.so, as
// the dynamic loader finds them (LD_LIBRARY_PATH, ld.so.conf, RUNPATH).
//
// A loaded NCCL is never unloaded (no dlclose): its threads can outlive the
// communicators we destroy, and unmapping code a thread may still run
// would crash. dlopen counts references, so opening it again is cheap.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_NCCL_LIB_NCCLLIBRARY_H
#define AOA_RUNTIME_BACKENDS_NCCL_LIB_NCCLLIBRARY_H

#include "aoa/runtime/support/Error.h"

#include <nccl.h>

#include <string>
#include <vector>

namespace aoa::runtime {

class NcclLibrary {
public:
  /// The environment variable that names the library to load.
  static constexpr const char *kEnvironmentVariable = "AOA_NCCL_LIBRARY";

  /// This process's NCCL: loaded on the first call, from
  /// $AOA_NCCL_LIBRARY or the loader path (see above); every later call
  /// returns the same table, or the same error. Thread-safe (a function-
  /// local static); the table is immutable once loaded.
  static Expected<const NcclLibrary *> load();

  /// Loads NCCL afresh with `override` standing in for $AOA_NCCL_LIBRARY
  /// (empty: as if unset) and resolves every function. A missing function
  /// (an NCCL older than 2.18 has no ncclCommSplit) is an error naming it
  /// and the version found. Does not change what load() returns.
  static Expected<NcclLibrary> open(const std::string &override);

  /// The names or paths open() gives dlopen, in order: `override` alone
  /// when it is not empty, otherwise libnccl.so.2 and libnccl.so.
  static std::vector<std::string> candidates(const std::string &override);

  /// The file the loader opened (a full path where it knows one).
  const std::string &path() const { return path_; }
  /// ncclGetVersion's code (22809) and as text ("2.28.9").
  int versionCode() const { return versionCode_; }
  std::string version() const;

  // The functions NcclJob.cpp calls, named as in nccl.h; never null.
  decltype(&::ncclGetErrorString) ncclGetErrorString = nullptr;
  decltype(&::ncclGetLastError) ncclGetLastError = nullptr;
  decltype(&::ncclGetVersion) ncclGetVersion = nullptr;
  decltype(&::ncclGetUniqueId) ncclGetUniqueId = nullptr;
  decltype(&::ncclCommInitRank) ncclCommInitRank = nullptr;
  decltype(&::ncclCommDestroy) ncclCommDestroy = nullptr;
  decltype(&::ncclCommAbort) ncclCommAbort = nullptr;
  decltype(&::ncclCommSplit) ncclCommSplit = nullptr;
  decltype(&::ncclAllReduce) ncclAllReduce = nullptr;
  decltype(&::ncclBroadcast) ncclBroadcast = nullptr;
  decltype(&::ncclGroupStart) ncclGroupStart = nullptr;
  decltype(&::ncclGroupEnd) ncclGroupEnd = nullptr;
  decltype(&::ncclSend) ncclSend = nullptr;
  decltype(&::ncclRecv) ncclRecv = nullptr;

private:
  NcclLibrary() = default;

  std::string path_;
  int versionCode_ = 0;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_NCCL_LIB_NCCLLIBRARY_H
