//===- RegionCopyGeometry.h - Checking and shaping copies -------*- C++ -*-===//
//
// Private to the runtime library. What copyRegion (RegionCopy.h) and
// describeRegionCopy (StridedCopy.h) have in common: the validation of the
// arguments, with its messages, and the description of the copy as a list
// of dimensions in destination order, each with its extent and its stride
// (in elements) in the source and in the destination. Dimensions of extent
// 1 are dropped and neighbours that are contiguous in both tensors are
// merged, so most copies end up with a long contiguous innermost run or as a
// plain 2-D transpose. Keeping both users on this code keeps the CPU copy
// and the GPU kernels answering the same arguments with the same errors.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_REGIONCOPYGEOMETRY_H
#define AOA_RUNTIME_TRANSFORMS_LIB_REGIONCOPYGEOMETRY_H

#include "aoa/ir/Box.h"
#include "aoa/ir/Permutation.h"
#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/transforms/TensorView.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace aoa::runtime {

struct CopyDim {
  int64_t extent;
  int64_t srcStride;
  int64_t dstStride;
};

using CopyDims = llvm::SmallVector<CopyDim, 8>;

/// The hint of copy errors whose cause is an inconsistent plan.
extern const char *const kRegionCopyPlanHint;

/// "region copy: what", with `hint`.
Error regionCopyError(const std::string &what,
                      const char *hint = kRegionCopyPlanHint);

/// Checks copyRegion's arguments (RegionCopy.h says what is checked) and
/// reports the first problem.
Status validateRegionCopy(const TensorView &src, const Box &srcRegion,
                          const MutableTensorView &dst, const Box &dstRegion,
                          const Permutation &permutation);

/// The copy's dimensions in destination order, without extent-1 dimensions
/// and with neighbours merged where they are contiguous in both tensors.
/// Never empty: a single element is one dimension of extent 1.
/// Precondition: validateRegionCopy accepted the arguments.
CopyDims describeCopyDims(llvm::ArrayRef<int64_t> srcShape,
                          const Box &srcRegion,
                          llvm::ArrayRef<int64_t> dstShape,
                          const Permutation &permutation);

/// The row-major offset, in elements, of the region's first element.
int64_t regionStart(const Box &region, llvm::ArrayRef<int64_t> shape);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_LIB_REGIONCOPYGEOMETRY_H
