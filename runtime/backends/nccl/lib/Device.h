//===- Device.h - A GPU as the nccl backend sees it -------------*- C++ -*-===//
//
// The nccl backend (docs/aoa-run.md) keeps a round's buffers in GPU memory:
// reads land in pinned host memory and are uploaded, messages move between
// GPUs, copies run as kernels (StridedCopy.h), and what is written is
// downloaded into pinned host memory again. A Device is that GPU: memory,
// one in-order work stream per pipeline slot, uploads, downloads and
// strided-copy kernels queued on a stream, and waiting for a stream.
//
// Two devices exist: the CUDA one (a build with AOA_ENABLE_CUDA on a machine
// with a GPU) and an emulated one whose "device memory" is host memory and
// whose kernels run the same element code on the CPU, synchronously. The
// emulated device lets the backend's bookkeeping (what is uploaded, what is
// downloaded, which kernel copies what) be tested on machines without a GPU.
//
// This header does not include cuda_runtime.h.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICE_H
#define AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICE_H

#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace aoa::runtime {

struct StridedCopy;

/// Memory that a Device allocated, freed by the Device's deleter.
class DeviceMemory {
public:
  DeviceMemory() = default;
  DeviceMemory(void *data, uint64_t bytes, std::function<void(void *)> free)
      : data_(data, std::move(free)), bytes_(bytes) {}

  uint8_t *data() const { return static_cast<uint8_t *>(data_.get()); }
  uint64_t bytes() const { return bytes_; }
  explicit operator bool() const { return data_ != nullptr; }

private:
  std::unique_ptr<void, std::function<void(void *)>> data_;
  uint64_t bytes_ = 0;
};

class Device {
public:
  virtual ~Device();

  /// "NVIDIA H100 80GB HBM3 (GPU 0)", "emulated device (host memory)".
  virtual std::string name() const = 0;
  /// True for the CUDA device: memory is GPU memory and streams run
  /// asynchronously.
  virtual bool isGpu() const = 0;
  /// Device memory; fails with a message naming the size.
  virtual Expected<DeviceMemory> allocate(uint64_t bytes) = 0;
  /// Page-locked host memory (for uploads and downloads that overlap).
  virtual Expected<DeviceMemory> allocatePinnedHost(uint64_t bytes) = 0;

  /// The device memory free when the device was opened; 0 when unknown
  /// (emulated).
  virtual uint64_t freeMemory() const = 0;

  /// The number of work streams (at least 3). Work queued on one stream runs
  /// in order; different streams may overlap.
  virtual unsigned streamCount() const = 0;
  /// Makes the work queued on `waiting` from now on wait until the work
  /// queued on `other` so far has run (an event between the streams).
  virtual Status streamWaitsFor(unsigned waiting, unsigned other) = 0;
  /// Queues a copy of `bytes` from host to device memory (or back).
  virtual Status upload(unsigned stream, void *device, const void *host,
                        uint64_t bytes) = 0;
  virtual Status download(unsigned stream, void *host, const void *device,
                          uint64_t bytes) = 0;
  /// Queues a plain copy of `bytes` between two places in device memory.
  virtual Status copyBytes(unsigned stream, void *to, const void *from,
                           uint64_t bytes) = 0;
  /// Queues `copy` (its pointers are device memory) as a kernel.
  virtual Status copy(unsigned stream, const StridedCopy &copy) = 0;
  /// Waits until everything queued on `stream` has run; reports the first
  /// asynchronous failure.
  virtual Status synchronize(unsigned stream) = 0;
  /// The native stream handle (cudaStream_t), for NCCL; null when emulated.
  virtual void *nativeStream(unsigned stream) const = 0;
};

/// The emulated device (always available).
std::unique_ptr<Device> makeEmulatedDevice();

/// Whether this build has CUDA (AOA_ENABLE_CUDA).
bool cudaBuildAvailable();
/// The number of CUDA GPUs this process can use (0 without a driver or a
/// GPU, or in a build without CUDA). `why` says why there are none.
int cudaDeviceCount(std::string *why = nullptr);
/// GPU `ordinal` as this process's current device, with its streams. Fails
/// with a clear message when this build has no CUDA or there is no such GPU.
Expected<std::unique_ptr<Device>> openCudaDevice(int ordinal);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICE_H
