//===- MpiExchange.h - A round's messages over MPI --------------*- C++ -*-===//
//
// Private to the mpi folder: posts all sends and receives of a rank's round
// at once (MPI_Isend/MPI_Irecv of the buffers each message lists, in place,
// through one derived datatype per message) and waits for all of them, so
// no round can deadlock. Used by the mpi backend on its host buffers and by
// the nccl backend's emulated device (whose memory is host memory).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_LIB_MPIEXCHANGE_H
#define AOA_RUNTIME_EXEC_LIB_MPIEXCHANGE_H

#include "aoa/runtime/exec/MpiSession.h"
#include "aoa/runtime/exec/RankRound.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace aoa::runtime {

/// Exchanges `round`'s messages; `address(b)` is where buffer b's bytes
/// are. Adds the bytes received to `received`. A failed message is reported
/// after all of the round's messages have completed, so that no peer is
/// left waiting for one (MPI's own errors abort the job; only the test hook,
/// FaultInjection.h, fails a message today).
Status exchangeWithMpi(const MpiSession &session, const RankRound &round,
                       llvm::function_ref<uint8_t *(uint32_t)> address,
                       uint64_t &received);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_LIB_MPIEXCHANGE_H
