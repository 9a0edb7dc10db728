//===- NoCuda.cpp - The nccl backend of a build without CUDA --------------===//
//
// Compiled instead of the other files of this folder when AOA_ENABLE_CUDA
// is OFF: the API exists, and opening a GPU or an NCCL job says why it
// cannot. The emulated device (EmulatedDevice.cpp) is always there.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "NcclJob.h"

namespace aoa::runtime {

namespace {

const char *const kNoCudaHint =
    "install the CUDA toolkit with NCCL (e.g. in /usr/local/cuda) and "
    "rebuild with -DAOA_ENABLE_CUDA=ON, or use --backend=mpi (CPU hosts) or "
    "--backend=local";

} // namespace

bool cudaBuildAvailable() { return false; }

int cudaDeviceCount(std::string *why) {
  if (why)
    *why = "this build has no CUDA support (aoa was configured without a "
           "CUDA toolkit)";
  return 0;
}

Expected<std::unique_ptr<Device>> openCudaDevice(int) {
  return Error{"this build has no nccl backend (aoa was configured without "
               "CUDA and NCCL)",
               kNoCudaHint};
}

struct NcclJob::Handles {};

NcclJob::NcclJob() : handles_(std::make_unique<Handles>()) {}
NcclJob::~NcclJob() = default;

bool NcclJob::available() { return false; }

Expected<std::string> NcclJob::version() {
  return Error{"this build has no nccl backend (aoa was configured without "
               "CUDA and NCCL)",
               kNoCudaHint};
}

Expected<std::string> NcclJob::probeVersion(const std::string &) {
  return version();
}

Expected<std::unique_ptr<NcclJob>> NcclJob::start(const NcclBootstrap &,
                                                  Device &) {
  return Error{"this build has no nccl backend (aoa was configured without "
               "CUDA and NCCL)",
               kNoCudaHint};
}

} // namespace aoa::runtime
