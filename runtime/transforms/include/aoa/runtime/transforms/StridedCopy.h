//===- StridedCopy.h - One region copy as plain data ------------*- C++ -*-===//
//
// A StridedCopy is a region copy (RegionCopy.h) reduced to what a loop, or a
// CUDA kernel, needs: at most kMaxStridedCopyRank dimensions with an extent
// and a stride (in elements) in the source and in the destination, the two
// dtypes and the two pointers. It is plain data, so the nccl backend passes
// it to its kernels by value, and the emulated device runs it with the very
// element code the kernels run (runStridedCopyOnHost), so that both give the
// bytes copyRegion gives.
//
// This header is included by CUDA sources, which must not see LLVM headers:
// there (under __CUDACC__) TensorView, Box and Permutation are only declared;
// C++ sources get their headers, to call describeRegionCopy.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_STRIDEDCOPY_H
#define AOA_RUNTIME_TRANSFORMS_STRIDEDCOPY_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/support/Error.h"

#ifndef __CUDACC__
#include "aoa/ir/Box.h"
#include "aoa/ir/Permutation.h"
#include "aoa/runtime/transforms/TensorView.h"
#endif

#include <cstdint>

namespace aoa {
class Box;
class Permutation;
} // namespace aoa

namespace aoa::runtime {

struct TensorView;
struct MutableTensorView;

/// The most dimensions a StridedCopy has: every region copy of rank up to 8,
/// and of any rank once extent-1 and contiguous dimensions are merged.
constexpr int kMaxStridedCopyRank = 8;

/// One strided copy with a cast: the element at iteration coordinates c
/// (row-major over `extents`, innermost last) is read at source +
/// sum(c[i] * sourceStrides[i]) elements (of `from`), converted, and written
/// at destination + sum(c[i] * destinationStrides[i]) elements (of `to`).
/// Rank 0 is a single element. Pointers need no alignment beyond a byte.
struct StridedCopy {
  int rank = 0;
  int64_t extents[kMaxStridedCopyRank] = {};
  int64_t sourceStrides[kMaxStridedCopyRank] = {};
  int64_t destinationStrides[kMaxStridedCopyRank] = {};
  DType from = DType::F32, to = DType::F32;
  const void *source = nullptr;
  void *destination = nullptr;
  /// For a checked cast (Cast.h: castMayFail): a word in the memory the
  /// copy runs in (device memory for a kernel), holding kNoCastFailure
  /// before the copy, that the copy lowers to the smallest destination
  /// offset (in elements from `destination`) of an element without a
  /// result. Null: such elements are not reported (they become 0).
  unsigned long long *castFailure = nullptr;

  /// The product of the first `rank` extents (1 for rank 0).
  uint64_t elementCount() const;
};

/// copyRegion(src, srcRegion, dst, dstRegion, permutation) as one
/// StridedCopy: the same validation with the same messages, then the copy's
/// dimensions in destination order with extent-1 dimensions dropped and
/// neighbours merged where contiguous in both tensors (rank 1 at least; an
/// empty region gives extent 0). Fails when more than kMaxStridedCopyRank
/// dimensions remain. Reads no element: the pointers may be device memory.
Expected<StridedCopy> describeRegionCopy(const TensorView &src,
                                         const Box &srcRegion,
                                         const MutableTensorView &dst,
                                         const Box &dstRegion,
                                         const Permutation &permutation);

/// Runs `copy` on the CPU, synchronously, the way the CUDA kernel runs it
/// (the same path choice, the same element code; see
/// lib/StridedCopyLaunch.h). Slow: meant for the emulated device and for
/// tests. Precondition: `copy` is valid (rank in 0..8, a dtype pair that
/// isCastSupported (Cast.h) accepts, non-negative extents, strides that
/// stay inside the buffers); an invalid copy copies nothing.
void runStridedCopyOnHost(const StridedCopy &copy);

/// Checks what runStridedCopyOnHost and the kernel assume of `copy` that
/// can be checked without its buffers: the rank, the extents and the dtype
/// pair.
Status checkStridedCopy(const StridedCopy &copy);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_STRIDEDCOPY_H
