//===- HostDevice.h - Functions for both the CPU and the GPU ----*- C++ -*-===//
//
// AOA_HOST_DEVICE marks a function that CUDA kernels call as well as host
// code: the element conversions (FloatConversion.h) and the strided-copy
// element code that the nccl backend's kernels and the emulated device
// share, so that both compute the same bits from the very same source. In a
// plain C++ translation unit it expands to nothing.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_HOSTDEVICE_H
#define AOA_RUNTIME_TRANSFORMS_HOSTDEVICE_H

#ifdef __CUDACC__
#define AOA_HOST_DEVICE __host__ __device__
#else
#define AOA_HOST_DEVICE
#endif

#endif // AOA_RUNTIME_TRANSFORMS_HOSTDEVICE_H
