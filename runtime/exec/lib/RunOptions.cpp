//===- RunOptions.cpp -----------------------------------------------------===//
#include "aoa/runtime/exec/RunOptions.h"

#include <unistd.h>

namespace aoa::runtime {

uint64_t memoryLimitOf(const RunOptions &options) {
  if (options.memoryLimit)
    return options.memoryLimit;
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long pageSize = ::sysconf(_SC_PAGE_SIZE);
  uint64_t physical =
      pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
  return physical / 10 * 9;
}

} // namespace aoa::runtime
