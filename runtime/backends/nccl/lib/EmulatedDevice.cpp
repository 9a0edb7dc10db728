//===- EmulatedDevice.cpp - A Device made of host memory ------------------===//
//
// Device.h's emulated device: memory is host memory, every queued operation
// runs at once on the calling thread (so streams are trivially in order and
// synchronize only reports), and kernels are runStridedCopyOnHost, the very
// element code the CUDA kernel runs.
//
//===----------------------------------------------------------------------===//
#include "Device.h"

#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/transforms/StridedCopy.h"

#include <cstdlib>
#include <cstring>

namespace aoa::runtime {

Device::~Device() = default;

namespace {

class EmulatedDevice final : public Device {
public:
  std::string name() const override {
    return "emulated device (host memory)";
  }
  bool isGpu() const override { return false; }
  uint64_t freeMemory() const override { return 0; }

  Expected<DeviceMemory> allocate(uint64_t bytes) override {
    // 256-byte alignment, as cudaMalloc gives.
    uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 255) / 256 * 256;
    void *data = std::aligned_alloc(256, size_t(rounded));
    if (!data)
      return Error{"cannot allocate " + formatByteSize(int64_t(bytes)) +
                       " of (emulated) device memory",
                   "recompile the plan with a smaller --memory-budget"};
    return DeviceMemory(data, bytes, [](void *p) { std::free(p); });
  }
  Expected<DeviceMemory> allocatePinnedHost(uint64_t bytes) override {
    return allocate(bytes);
  }

  unsigned streamCount() const override { return 3; }
  Status streamWaitsFor(unsigned, unsigned) override { return Status(); }
  Status upload(unsigned, void *device, const void *host,
                uint64_t bytes) override {
    std::memcpy(device, host, size_t(bytes));
    return Status();
  }
  Status download(unsigned, void *host, const void *device,
                  uint64_t bytes) override {
    std::memcpy(host, device, size_t(bytes));
    return Status();
  }
  Status copyBytes(unsigned, void *to, const void *from,
                   uint64_t bytes) override {
    std::memmove(to, from, size_t(bytes));
    return Status();
  }
  Status copy(unsigned, const StridedCopy &copy) override {
    // What the kernel launch would refuse, the emulation refuses too.
    if (Status status = checkStridedCopy(copy); !status.ok())
      return status;
    runStridedCopyOnHost(copy);
    return Status();
  }
  Status synchronize(unsigned) override { return Status(); }
  void *nativeStream(unsigned) const override { return nullptr; }
};

} // namespace

std::unique_ptr<Device> makeEmulatedDevice() {
  return std::make_unique<EmulatedDevice>();
}

} // namespace aoa::runtime
