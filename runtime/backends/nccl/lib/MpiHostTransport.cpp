//===- MpiHostTransport.cpp - The emulated device's messages over MPI ----===//
//
// The nccl backend's transport on its emulated device (Device.h): device
// memory is host memory there, so MPI can move it.
//
//===----------------------------------------------------------------------===//
#include "DeviceTransport.h"

#include "aoa/runtime/backends/MpiBackend.h"

namespace aoa::runtime {

namespace {

class MpiHostTransport final : public DeviceTransport {
public:
  explicit MpiHostTransport(const MpiSession &session) : session_(session) {}
  Status exchange(const RankRound &round,
                  llvm::function_ref<uint8_t *(uint32_t)> address, Device &,
                  unsigned, uint64_t &received) override {
    return exchangeWithMpi(session_, round, address, received);
  }

private:
  const MpiSession &session_;
};

} // namespace

std::unique_ptr<DeviceTransport>
makeMpiHostTransport(const MpiSession &session) {
  if (!MpiSession::available())
    return nullptr;
  return std::make_unique<MpiHostTransport>(session);
}

} // namespace aoa::runtime
