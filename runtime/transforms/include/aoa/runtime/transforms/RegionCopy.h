//===- RegionCopy.h - Strided copies of boxes between tensors ---*- C++ -*-===//
//
// copyRegion moves a box of one in-memory tensor into a box of another,
// optionally permuting axes and casting elements on the way: the runtime's
// `copy` instruction (docs/plan-format.md). With P the permutation, the element
// at offset l inside the source region (l relative to the region's begin)
// lands at offset m inside the destination region where m[i] = l[P[i]], so
// the destination region's shape is P applied to the source region's shape
// (Permutation.h: new[i] = old[P[i]]).
//
// The copy merges dimensions that are contiguous in both tensors and then
// takes the fastest applicable path:
//  - contiguous runs in both: memcpy per run (or a vectorizable cast loop);
//  - a transpose (the destination's innermost axis is strided in the source
//    while another axis is contiguous there): 2-D tiles small enough for the
//    cache, read along one axis and written along the other;
//  - otherwise an element-by-element strided loop.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_REGIONCOPY_H
#define AOA_RUNTIME_TRANSFORMS_REGIONCOPY_H

#include "aoa/ir/Box.h"
#include "aoa/ir/Permutation.h"
#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/transforms/TensorView.h"

namespace aoa::runtime {

/// Copies `srcRegion` of `src` into `dstRegion` of `dst` through
/// `permutation`, casting from src.dtype to dst.dtype (Cast.h says which
/// pairs are supported). Validates everything first and copies nothing on
/// failure: ranks agree; extents are non-negative; each view's bytes hold its
/// shape; each region lies inside its tensor; the destination region's shape
/// is the permuted source region's; the buffers do not overlap.
///
/// A checked cast (Cast.h) of an element without a result (NaN to int8,
/// 300 to uint8) fails after the copy, with castFailureError's message;
/// the destination then holds 0 at such elements. `castFailure`, when
/// given, receives the smallest destination offset of such an element (in
/// elements from the destination region's first one, which for a whole
/// dense tensor is its row-major index), or kNoCastFailure (~0) if none.
Status copyRegion(const TensorView &src, const Box &srcRegion,
                  const MutableTensorView &dst, const Box &dstRegion,
                  const Permutation &permutation,
                  uint64_t *castFailure = nullptr);

/// copyRegion with the identity permutation.
Status copyRegion(const TensorView &src, const Box &srcRegion,
                  const MutableTensorView &dst, const Box &dstRegion);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_REGIONCOPY_H
