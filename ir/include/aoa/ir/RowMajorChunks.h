//===- RowMajorChunks.h - A box in bounded row-major slabs ------*- C++ -*-===//
//
// Tools that stream whole tensors (writing a checkpoint, comparing two) keep
// their memory bounded by working on a slab of a tensor at a time. A slab is
// chosen to be contiguous in the row-major flattening of the box: a few
// leading indices fixed, a block of the next dimension, the trailing
// dimensions whole. So slabs are visited in flattening order, each one starts
// where the previous one ended, and its elements can be streamed (written at
// an offset, hashed) as they come.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_ROWMAJORCHUNKS_H
#define AOA_IR_ROWMAJORCHUNKS_H

#include "aoa/ir/Box.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace aoa {

/// Calls `visit` for consecutive row-major slabs of `box`, in order, each
/// with at most max(maxElements, 1) elements, together covering the box
/// exactly once; stops at the first slab for which `visit` returns false.
/// Slabs are as large as the bound and the slab shape allow. An empty box
/// has no slabs; a rank-0 box is one slab.
void forEachRowMajorChunk(const Box &box, int64_t maxElements,
                          llvm::function_ref<bool(const Box &chunk)> visit);

} // namespace aoa

#endif // AOA_IR_ROWMAJORCHUNKS_H
