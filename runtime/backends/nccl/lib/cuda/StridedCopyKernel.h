//===- StridedCopyKernel.h - Strided copies as CUDA kernels -----*- C++ -*-===//
//
// Private to the runtime library's CUDA part; names no CUDA type, so the
// nccl backend's C++ sources include it without cuda_runtime.h.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_NCCL_LIB_STRIDEDCOPYKERNEL_H
#define AOA_RUNTIME_BACKENDS_NCCL_LIB_STRIDEDCOPYKERNEL_H

#include "aoa/runtime/support/Error.h"
#include "aoa/runtime/transforms/StridedCopy.h"

namespace aoa::runtime {

/// Queues `copy` (its pointers are memory of the current CUDA device) on
/// `cudaStream` (a cudaStream_t; null is the legacy default stream): a
/// cudaMemcpyAsync when it is one contiguous same-dtype run, otherwise a
/// kernel (lib/StridedCopyLaunch.h says which). The result is bit for bit
/// what runStridedCopyOnHost gives. Fails when `copy` is invalid
/// (checkStridedCopy) or the launch fails, with the CUDA error's text;
/// failures of the kernel while it runs are reported by the stream's next
/// synchronization.
Status launchStridedCopyKernel(const StridedCopy &copy, void *cudaStream);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_NCCL_LIB_STRIDEDCOPYKERNEL_H
