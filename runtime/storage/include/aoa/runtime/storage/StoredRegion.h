//===- StoredRegion.h - Where a region of a key lies in a stored tensor -*- C++ -*-===//
//
// A stored tensor holds a box of its key, or (flattened) elements [a, b) of
// that box's row-major flattening (docs/shard-metadata.md). Reading or writing a
// region of the key means visiting the region's elements in row-major order
// as maximal runs that are contiguous both in the region and in the stored
// data. The executor turns runs into pread/pwrite ranges; the checkpoint
// tools into memcpy calls.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_STOREDREGION_H
#define AOA_RUNTIME_STORAGE_STOREDREGION_H

#include "aoa/ir/Box.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>

namespace aoa::runtime {

/// A contiguous run, in elements.
struct StoredRun {
  int64_t storedOffset = 0; ///< from the first stored element
  int64_t regionOffset = 0; ///< from the region's first element (row-major)
  int64_t count = 0;
};

/// Calls `visit` for each maximal run of `region` (a box of the key) inside
/// the tensor storing `storedBox` (flattened to `flat` when given), in
/// increasing order. Fails, visiting nothing, when the region is not inside
/// the box or reaches elements outside the flat range. Visiting stops at the
/// first run for which `visit` returns false.
Status forEachStoredRun(const Box &storedBox,
                        const std::optional<FlatElementRange> &flat,
                        const Box &region,
                        llvm::function_ref<bool(const StoredRun &)> visit);

/// Where `region` starts in the stored data (elements from the first stored
/// element) when forEachStoredRun would visit exactly one run: the region is
/// not empty, inside the box and the flat range, and contiguous there.
/// Otherwise nullopt.
std::optional<int64_t>
singleStoredRun(const Box &storedBox,
                const std::optional<FlatElementRange> &flat, const Box &region);

/// The number of runs forEachStoredRun visits (0 for an empty region); the
/// region must be inside the box.
int64_t storedRunCount(const Box &storedBox, const Box &region);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_STOREDREGION_H
