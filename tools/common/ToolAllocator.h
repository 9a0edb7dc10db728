//===- ToolAllocator.h - Which malloc a tool runs on -------------*- C++ -*-===//
//
// aoa-compile and aoa-plan link mimalloc when the build found it
// (AOA_USE_MIMALLOC, docs/compiler.md). Linking is not the same as running
// on it: only a library loaded before the C library replaces malloc. So the
// tools' --version asks the running process, by whether a block the C
// allocation functions just returned lies in mimalloc's heap.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TOOLS_COMMON_TOOLALLOCATOR_H
#define AOA_TOOLS_COMMON_TOOLALLOCATOR_H

#include <cstdlib>
#include <string>

#ifdef AOA_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace aoa {

/// "mimalloc 2.0.9", or "the C library's malloc" (with a note when mimalloc
/// was linked but does not serve malloc).
inline std::string toolAllocatorName() {
#ifdef AOA_WITH_MIMALLOC
  // (calloc: mi_is_in_heap_region takes a pointer to const, and GCC warns
  // of a block malloc left uninitialized.)
  void *probe = std::calloc(1, 64);
  bool served = mi_is_in_heap_region(probe);
  std::free(probe);
  int version = mi_version(); // major * 100 + minor * 10 + patch
  std::string name = "mimalloc " + std::to_string(version / 100) + "." +
                     std::to_string(version / 10 % 10) + "." +
                     std::to_string(version % 10);
  return served ? name
                : "the C library's malloc (" + name + " is linked but does "
                                                      "not serve malloc)";
#else
  return "the C library's malloc";
#endif
}

} // namespace aoa

#endif // AOA_TOOLS_COMMON_TOOLALLOCATOR_H
