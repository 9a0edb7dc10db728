//===- DeviceTransport.h - A round's messages between devices ---*- C++ -*-===//
//
// The nccl backend moves a round's messages between the ranks' device
// buffers with ncclSend/ncclRecv inside one group call (NcclCommunicator.h).
// Its emulated device (Device.h) keeps buffers in host memory, and there
// MPI carries the messages instead; a job of one rank has no messages at
// all. A DeviceTransport is any of these.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICETRANSPORT_H
#define AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICETRANSPORT_H

#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <memory>

namespace aoa::runtime {

class Device;
class MpiSession;
class RankRound;

class DeviceTransport {
public:
  virtual ~DeviceTransport();

  /// Queues `round`'s sends and receives on `stream` of `device` (or runs
  /// them at once, for host memory); `address(b)` is buffer b in device
  /// memory. Sends and receives between one pair of ranks pair up in
  /// program order. Adds the bytes received to `received`.
  virtual Status exchange(const RankRound &round,
                          llvm::function_ref<uint8_t *(uint32_t)> address,
                          Device &device, unsigned stream,
                          uint64_t &received) = 0;
  /// After a failure with messages possibly in flight: stops them, so that
  /// waiting for the device's streams returns (ncclCommAbort).
  virtual void abort() {}
};

/// For a job of one rank: fails if a round has a message.
std::unique_ptr<DeviceTransport> makeSingleRankTransport();
/// MPI between device buffers in host memory (the emulated device only);
/// null in a build without MPI.
std::unique_ptr<DeviceTransport> makeMpiHostTransport(const MpiSession &session);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICETRANSPORT_H
