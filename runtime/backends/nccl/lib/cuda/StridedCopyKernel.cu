//===- StridedCopyKernel.cu - Strided copies as CUDA kernels --------------===//
//
// The kernels are thin: grid-stride loops over the bodies of
// StridedCopyLaunch.h, which the host runs too (runStridedCopyOnHost). Each
// is a template over the element operation, so the dtype pair is fixed at
// compile time and the inner loop never switches; the pair, the alignment
// and the index width are picked once per launch on the host.
//
//===----------------------------------------------------------------------===//
#include "StridedCopyKernel.h"

#include "aoa/runtime/transforms/StridedCopyElement.h"
#include "aoa/runtime/transforms/StridedCopyLaunch.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace aoa::runtime {

namespace {

template <typename Op, bool Aligned, typename Index>
__global__ void __launch_bounds__(kElementwiseThreads)
    elementwiseKernel(const ElementwiseShape<Index> shape) {
  // The grid has at most 65535 blocks, so neither sum below wraps around.
  const Index step = Index(blockDim.x);
  const Index pass = Index(gridDim.x) * blockDim.x * kElementsPerThread;
  for (Index first =
           Index(blockIdx.x) * blockDim.x * kElementsPerThread + threadIdx.x;
       first < shape.count; first += pass)
    copyElementGroup<Op, Aligned>(shape, first, step);
}

/// Blocks of the transpose kernel that must fit one multiprocessor: more
/// than the registers would otherwise allow for narrow elements, whose
/// bytes in flight per thread are few (this caps registers per thread).
template <typename Op>
constexpr unsigned kTransposeMinBlocks = sizeof(typename Op::Src) <= 2 &&
                                                 sizeof(typename Op::Dst) <= 4
                                             ? 5
                                             : 4;

template <typename Op, bool Aligned, bool Pairs>
__global__ void __launch_bounds__(kTransposeThreads, kTransposeMinBlocks<Op>)
    transposeKernel(const TransposeShape shape) {
  __shared__ TransposeTile<typename Op::Dst> tile[kTransposeTile];
  // Grid dimensions are capped (65535 for y and z); the loops cover the
  // rest. Every thread of a block runs the same iterations, so the
  // barriers are reached by all.
  for (int64_t batch = blockIdx.z; batch < shape.batches; batch += gridDim.z)
    for (int64_t rowTile = blockIdx.y; rowTile < shape.rowTiles;
         rowTile += gridDim.y)
      for (int64_t columnTile = blockIdx.x; columnTile < shape.columnTiles;
           columnTile += gridDim.x) {
        TileOrigin origin = tileOrigin(shape, batch, rowTile, columnTile);
        loadTransposeTile<Op, Aligned, Pairs>(shape, origin, threadIdx.x,
                                              threadIdx.y, tile);
        __syncthreads();
        storeTransposeTile<Op, Aligned, Pairs>(shape, origin, threadIdx.x,
                                               threadIdx.y, tile);
        // The next tile's loads must not overwrite what is still read.
        __syncthreads();
      }
}

Error cudaFailure(const char *what, cudaError_t error) {
  return Error{std::string("CUDA strided copy: ") + what + ": " +
                   cudaGetErrorString(error),
               "check the GPU (nvidia-smi) and that the copy's buffers are "
               "memory of the current device"};
}

/// Blocks for the elementwise kernel: enough for every element, at most as
/// many as the GPU holds at once (the grid-stride loop does the rest), and
/// never more than 65535.
Expected<unsigned> elementwiseBlocks(uint64_t count) {
  int device = 0, processors = 0, threadsPerProcessor = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount,
                                   device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(
        &threadsPerProcessor, cudaDevAttrMaxThreadsPerMultiProcessor, device);
  if (error != cudaSuccess)
    return cudaFailure("cannot query the device", error);
  uint64_t resident =
      uint64_t(std::max(processors, 1)) *
      std::max(threadsPerProcessor / int(kElementwiseThreads), 1);
  uint64_t needed = (count + kElementwiseThreads * kElementsPerThread - 1) /
                    (kElementwiseThreads * kElementsPerThread);
  return unsigned(std::min({needed, resident, uint64_t(65535)}));
}

/// Whether the operation's elements can be misaligned at all: bytes never
/// are, and 16-byte words and cast vectors are only used where aligned.
template <typename Op>
constexpr bool kMayBeMisaligned = (sizeof(typename Op::Src) > 1 ||
                                   sizeof(typename Op::Dst) > 1) &&
                                  sizeof(typename Op::Src) < 16 &&
                                  !IsCastLanes<Op>::value;

/// Queues the kernel of `launch`'s path; false when the path has no kernel
/// for this operation (planStridedCopyLaunch never asks for one).
template <typename Op, bool Aligned>
bool launchKernel(const StridedCopyLaunch &launch, unsigned blocks,
                  cudaStream_t stream) {
  switch (launch.path) {
  case StridedCopyPath::Elementwise32:
    elementwiseKernel<Op, Aligned, uint32_t>
        <<<blocks, kElementwiseThreads, 0, stream>>>(launch.elementwise32);
    return true;
  case StridedCopyPath::Elementwise64:
    elementwiseKernel<Op, Aligned, uint64_t>
        <<<blocks, kElementwiseThreads, 0, stream>>>(launch.elementwise64);
    return true;
  case StridedCopyPath::Transpose:
    // Transposes never move widened words, cast vectors or casts with an
    // integer side.
    if constexpr (MayTranspose<Op>::value) {
      const TransposeShape &shape = launch.transpose;
      dim3 grid(unsigned(std::min<int64_t>(shape.columnTiles, INT32_MAX)),
                unsigned(std::min<int64_t>(shape.rowTiles, 65535)),
                unsigned(std::min<int64_t>(shape.batches, 65535)));
      dim3 block(kTransposeBlockWidth, kTransposeBlockRows);
      // Pairs need aligned elements, which launchStridedCopyKernel gives.
      if constexpr (Aligned) {
        if (launch.transposeInPairs) {
          transposeKernel<Op, true, true><<<grid, block, 0, stream>>>(shape);
          return true;
        }
      }
      transposeKernel<Op, Aligned, false><<<grid, block, 0, stream>>>(shape);
      return true;
    }
    return false;
  case StridedCopyPath::Empty:
  case StridedCopyPath::Contiguous:
    return false;
  }
  return false;
}

} // namespace

Status launchStridedCopyKernel(const StridedCopy &copy, void *cudaStream) {
  Expected<StridedCopyLaunch> launch = planStridedCopyLaunch(copy);
  if (!launch)
    return launch.error();
  auto stream = static_cast<cudaStream_t>(cudaStream);
  switch (launch->path) {
  case StridedCopyPath::Empty:
    return Status();
  case StridedCopyPath::Contiguous:
    if (cudaError_t error = cudaMemcpyAsync(launch->destination, launch->source,
                                            launch->contiguousBytes,
                                            cudaMemcpyDeviceToDevice, stream);
        error != cudaSuccess)
      return cudaFailure("cudaMemcpyAsync failed", error);
    return Status();
  default:
    break;
  }
  unsigned blocks = 0;
  if (launch->path == StridedCopyPath::Elementwise32 ||
      launch->path == StridedCopyPath::Elementwise64) {
    uint64_t count = launch->path == StridedCopyPath::Elementwise32
                         ? launch->elementwise32.count
                         : launch->elementwise64.count;
    Expected<unsigned> grid = elementwiseBlocks(count);
    if (!grid)
      return grid.error();
    blocks = *grid;
  }
  // Clear an earlier, unrelated failure so that the check below reports
  // this launch.
  (void)cudaGetLastError();
  bool launched = false;
  withLaunchElement(*launch, [&](auto op) {
    using Op = decltype(op);
    if constexpr (kMayBeMisaligned<Op>) {
      if (!launch->aligned) {
        launched = launchKernel<Op, false>(*launch, blocks, stream);
        return;
      }
    }
    launched = launchKernel<Op, true>(*launch, blocks, stream);
  });
  if (!launched)
    return Error{"CUDA strided copy: no kernel for this copy (a bug in "
                 "aoa-run's kernel planning)",
                 "please report it with the plan that was run"};
  if (cudaError_t error = cudaGetLastError(); error != cudaSuccess)
    return cudaFailure("the kernel launch failed", error);
  return Status();
}

} // namespace aoa::runtime
