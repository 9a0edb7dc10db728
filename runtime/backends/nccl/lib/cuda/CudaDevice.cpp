//===- CudaDevice.cpp - Device.h on a CUDA GPU ----------------------------===//
//
// Compiled only with AOA_ENABLE_CUDA. cudart is linked statically, so this
// runs (and reports that there is no GPU) on machines without a driver.
//
//===----------------------------------------------------------------------===//
#include "Device.h"

#include "StridedCopyKernel.h"
#include "aoa/ir/ByteSize.h"

#include <cuda_runtime.h>

#include <vector>

namespace aoa::runtime {

namespace {

Error cudaError(const std::string &what, cudaError_t code) {
  return Error{what + ": " + cudaGetErrorString(code) + " (CUDA error " +
                   std::to_string(int(code)) + ")",
               ""};
}

Status check(const std::string &what, cudaError_t code) {
  if (code == cudaSuccess)
    return Status();
  return cudaError(what, code);
}

/// Two pipeline slots and the transfer stream (DeviceExecutor.h).
constexpr unsigned kStreams = 3;

class CudaDevice final : public Device {
public:
  CudaDevice(int ordinal, std::string name, uint64_t freeMemory)
      : ordinal_(ordinal), name_(std::move(name)), freeMemory_(freeMemory) {}

  Status createStreams() {
    for (unsigned s = 0; s < kStreams; ++s) {
      cudaStream_t stream = nullptr;
      if (Status status = check("cudaStreamCreateWithFlags",
                                cudaStreamCreateWithFlags(
                                    &stream, cudaStreamNonBlocking));
          !status.ok())
        return status;
      streams_.push_back(stream);
    }
    return Status();
  }

  ~CudaDevice() override {
    for (cudaStream_t stream : streams_) {
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
  }

  std::string name() const override { return name_; }
  bool isGpu() const override { return true; }
  uint64_t freeMemory() const override { return freeMemory_; }

  Expected<DeviceMemory> allocate(uint64_t bytes) override {
    void *data = nullptr;
    cudaError_t code = cudaMalloc(&data, size_t(std::max<uint64_t>(bytes, 1)));
    if (code != cudaSuccess) {
      cudaGetLastError();
      return Error{"cannot allocate " + formatByteSize(int64_t(bytes)) +
                       " on " + name_ + ": " + cudaGetErrorString(code),
                   "recompile the plan with a smaller --memory-budget, or "
                   "free GPU memory"};
    }
    return DeviceMemory(data, bytes, [](void *p) { cudaFree(p); });
  }

  Expected<DeviceMemory> allocatePinnedHost(uint64_t bytes) override {
    void *data = nullptr;
    cudaError_t code =
        cudaMallocHost(&data, size_t(std::max<uint64_t>(bytes, 1)));
    if (code != cudaSuccess) {
      cudaGetLastError();
      return Error{"cannot allocate " + formatByteSize(int64_t(bytes)) +
                       " of pinned host memory: " + cudaGetErrorString(code),
                   "recompile the plan with a smaller --memory-budget, or "
                   "start fewer ranks per host"};
    }
    return DeviceMemory(data, bytes, [](void *p) { cudaFreeHost(p); });
  }

  unsigned streamCount() const override { return kStreams; }

  Status streamWaitsFor(unsigned waiting, unsigned other) override {
    cudaEvent_t event = nullptr;
    Status status = check("cudaEventCreateWithFlags",
                          cudaEventCreateWithFlags(&event,
                                                   cudaEventDisableTiming));
    if (status.ok())
      status = check("cudaEventRecord", cudaEventRecord(event, streams_[other]));
    if (status.ok())
      status = check("cudaStreamWaitEvent",
                     cudaStreamWaitEvent(streams_[waiting], event, 0));
    // Destroying a recorded event is allowed: its resources are released
    // once it completes.
    if (event)
      cudaEventDestroy(event);
    return status;
  }

  Status upload(unsigned stream, void *device, const void *host,
                uint64_t bytes) override {
    return check("uploading " + formatByteSize(int64_t(bytes)) + " to " + name_,
                 cudaMemcpyAsync(device, host, size_t(bytes),
                                 cudaMemcpyHostToDevice, streams_[stream]));
  }
  Status download(unsigned stream, void *host, const void *device,
                  uint64_t bytes) override {
    return check("downloading " + formatByteSize(int64_t(bytes)) + " from " +
                     name_,
                 cudaMemcpyAsync(host, device, size_t(bytes),
                                 cudaMemcpyDeviceToHost, streams_[stream]));
  }
  Status copyBytes(unsigned stream, void *to, const void *from,
                   uint64_t bytes) override {
    return check("copying " + formatByteSize(int64_t(bytes)) + " on " + name_,
                 cudaMemcpyAsync(to, from, size_t(bytes),
                                 cudaMemcpyDeviceToDevice, streams_[stream]));
  }
  Status copy(unsigned stream, const StridedCopy &copy) override {
    return launchStridedCopyKernel(copy, streams_[stream]);
  }
  Status synchronize(unsigned stream) override {
    return check("running the work queued on " + name_,
                 cudaStreamSynchronize(streams_[stream]));
  }
  void *nativeStream(unsigned stream) const override {
    return streams_[stream];
  }

private:
  int ordinal_;
  std::string name_;
  uint64_t freeMemory_;
  std::vector<cudaStream_t> streams_;
};

} // namespace

bool cudaBuildAvailable() { return true; }

int cudaDeviceCount(std::string *why) {
  int count = 0; // cudaGetDeviceCount leaves it untouched on failure
  cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    cudaGetLastError();
    if (why)
      *why = std::string(cudaGetErrorString(code)) +
             (code == cudaErrorInsufficientDriver ||
                      code == cudaErrorNoDevice
                  ? " (no usable NVIDIA driver or GPU on this machine)"
                  : "");
    return 0;
  }
  if (count == 0 && why)
    *why = "the CUDA driver reports no GPU";
  return count;
}

Expected<std::unique_ptr<Device>> openCudaDevice(int ordinal) {
  std::string why;
  int count = cudaDeviceCount(&why);
  if (count == 0)
    return Error{"the nccl backend needs a CUDA GPU, and there is none: " + why,
                 "run on a machine with an NVIDIA GPU and driver, or use "
                 "--backend=mpi (CPU hosts) or --backend=local"};
  if (ordinal < 0 || ordinal >= count)
    return Error{"GPU " + std::to_string(ordinal) + " does not exist (" +
                     std::to_string(count) + " visible)",
                 "start at most as many ranks per host as it has GPUs, or set "
                 "LOCAL_RANK / CUDA_VISIBLE_DEVICES"};
  if (Status status = check("cudaSetDevice", cudaSetDevice(ordinal));
      !status.ok())
    return status.error();
  cudaDeviceProp properties{};
  if (Status status = check("cudaGetDeviceProperties",
                            cudaGetDeviceProperties(&properties, ordinal));
      !status.ok())
    return status.error();
  size_t freeBytes = 0, totalBytes = 0;
  if (Status status = check("cudaMemGetInfo",
                            cudaMemGetInfo(&freeBytes, &totalBytes));
      !status.ok())
    return status.error();
  auto device = std::make_unique<CudaDevice>(
      ordinal,
      std::string(properties.name) + " (GPU " + std::to_string(ordinal) + ")",
      uint64_t(freeBytes));
  if (Status status = device->createStreams(); !status.ok())
    return status.error();
  return std::unique_ptr<Device>(std::move(device));
}

} // namespace aoa::runtime
