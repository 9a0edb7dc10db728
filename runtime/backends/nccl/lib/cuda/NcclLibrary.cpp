//===- NcclLibrary.cpp - NCCL, loaded at run time with dlopen -------------===//
//
// Compiled only with AOA_ENABLE_CUDA. See NcclLibrary.h for why NCCL is
// not linked.
//
//===----------------------------------------------------------------------===//
#include "NcclLibrary.h"

#include <cstdlib>
#include <dlfcn.h>
#include <link.h>

namespace aoa::runtime {

namespace {

/// ncclCommSplit, the newest function in the table, came with NCCL 2.18.
const char *const kOldestVersion = "2.18";

/// ncclGetVersion's code: NCCL up to 2.8 counted X*1000 + Y*100 + Z (2.8.4
/// is 2804), later ones X*10000 + Y*100 + Z (2.28.9 is 22809).
bool oldNumbering(int code) { return code < 10000; }
int majorVersion(int code) {
  return oldNumbering(code) ? code / 1000 : code / 10000;
}

/// "2.28.9" for 22809.
std::string versionText(int code) {
  int minor = oldNumbering(code) ? code / 100 % 10 : code / 100 % 100;
  return std::to_string(majorVersion(code)) + "." + std::to_string(minor) +
         "." + std::to_string(code % 100);
}

std::string installHint() {
  return std::string("install NCCL ") + kOldestVersion +
         " or newer and add the directory of its libnccl.so.2 to "
         "LD_LIBRARY_PATH, or set " +
         NcclLibrary::kEnvironmentVariable + " to the library's full path";
}

/// The file `handle` came from, as the loader found it.
std::string loadedPath(void *handle, const std::string &fallback) {
  link_map *map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
      *map->l_name)
    return map->l_name;
  return fallback;
}

template <typename Function>
void resolve(void *handle, const char *name, Function &entry,
             std::string &missing) {
  entry = reinterpret_cast<Function>(::dlsym(handle, name));
  if (!entry)
    missing += std::string(missing.empty() ? "" : ", ") + name;
}

} // namespace

std::vector<std::string> NcclLibrary::candidates(const std::string &override) {
  if (!override.empty())
    return {override};
  return {"libnccl.so.2", "libnccl.so"};
}

std::string NcclLibrary::version() const { return versionText(versionCode_); }

Expected<NcclLibrary> NcclLibrary::open(const std::string &override) {
  std::vector<std::string> names = candidates(override);
  void *handle = nullptr;
  std::string tried, reasons;
  for (const std::string &name : names) {
    // RTLD_NOW: a library that cannot be bound fails here, not in the
    // middle of a job. RTLD_LOCAL: NCCL's symbols stay out of the global
    // namespace. glibc keeps dlerror()'s text per thread.
    handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle)
      break;
    const char *why = ::dlerror();
    tried += (tried.empty() ? "" : ", ") + name;
    reasons += std::string(reasons.empty() ? "" : "; ") +
               (why ? why : name + ": unknown dlopen error");
  }
  if (!handle) {
    if (!override.empty())
      return Error{
          std::string("cannot load NCCL from ") + kEnvironmentVariable + "=" +
              override + " (" + reasons + ")",
          std::string("set ") + kEnvironmentVariable +
              " to the full path of libnccl.so.2 (NCCL " + kOldestVersion +
              " or newer), or unset it to load libnccl.so.2 from the "
              "loader path (LD_LIBRARY_PATH)"};
    return Error{"cannot load NCCL, which the nccl backend loads when a job "
                 "starts: tried " +
                     tried + " (" + reasons + ")",
                 installHint()};
  }

  NcclLibrary library;
  library.path_ = loadedPath(handle, names.front());
  std::string missing;
  resolve(handle, "ncclGetVersion", library.ncclGetVersion, missing);
  if (!missing.empty())
    return Error{library.path_ + " is not NCCL: it has no ncclGetVersion",
                 installHint()};
  if (ncclResult_t code = library.ncclGetVersion(&library.versionCode_);
      code != ncclSuccess)
    return Error{"ncclGetVersion of " + library.path_ + " failed (NCCL error " +
                     std::to_string(int(code)) + ")",
                 installHint()};
  // nccl.h's types and signatures are those of its major version.
  std::string found = "NCCL " + library.version() + " (" + library.path_ + ")";
  if (majorVersion(library.versionCode_) != NCCL_MAJOR)
    return Error{found + " is not NCCL " + std::to_string(NCCL_MAJOR) +
                     ", the version aoa-run was built with (nccl.h " +
                     versionText(NCCL_VERSION_CODE) + ")",
                 installHint()};

  resolve(handle, "ncclGetErrorString", library.ncclGetErrorString, missing);
  resolve(handle, "ncclGetLastError", library.ncclGetLastError, missing);
  resolve(handle, "ncclGetUniqueId", library.ncclGetUniqueId, missing);
  resolve(handle, "ncclCommInitRank", library.ncclCommInitRank, missing);
  resolve(handle, "ncclCommDestroy", library.ncclCommDestroy, missing);
  resolve(handle, "ncclCommAbort", library.ncclCommAbort, missing);
  resolve(handle, "ncclCommSplit", library.ncclCommSplit, missing);
  resolve(handle, "ncclAllReduce", library.ncclAllReduce, missing);
  resolve(handle, "ncclBroadcast", library.ncclBroadcast, missing);
  resolve(handle, "ncclGroupStart", library.ncclGroupStart, missing);
  resolve(handle, "ncclGroupEnd", library.ncclGroupEnd, missing);
  resolve(handle, "ncclSend", library.ncclSend, missing);
  resolve(handle, "ncclRecv", library.ncclRecv, missing);
  if (!missing.empty())
    return Error{found + " lacks " + missing +
                     ", which the nccl backend calls (it needs NCCL " +
                     kOldestVersion + " or newer)",
                 installHint()};
  // `handle` is deliberately never closed (NcclLibrary.h).
  return library;
}

Expected<const NcclLibrary *> NcclLibrary::load() {
  // The environment is read once: the process keeps the NCCL it started
  // with, whatever happens to AOA_NCCL_LIBRARY later.
  static const Expected<NcclLibrary> loaded = [] {
    const char *override = std::getenv(kEnvironmentVariable);
    return open(override ? override : "");
  }();
  if (!loaded.ok())
    return loaded.error();
  return &*loaded;
}

} // namespace aoa::runtime
