//===- LiveInstructions.h - What is left to do when resuming ----*- C++ -*-===//
//
// A resumed run skips the work whose only purpose was a file that is already
// finished. Within a round data flows read -> send/recv -> copy -> write, so
// liveness is a backward walk: a write is live when its file is unfinished, a
// copy when its output is used by something live, a message when any buffer
// it carries is, a read when its buffer is. A fresh run keeps everything. A
// plan that holds only one rank's program (Plan::onlyRank: a process of an
// mpi or nccl job) cannot see the other end of its messages: it keeps every
// send and recv (and the reads a send carries), so both ends agree.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_LIVEINSTRUCTIONS_H
#define AOA_RUNTIME_EXEC_LIVEINSTRUCTIONS_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/MessageMatching.h"
#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <vector>

namespace aoa::runtime {

/// live[rank][round][instruction] != 0 when the instruction must run.
using InstructionMask = std::vector<std::vector<std::vector<uint8_t>>>;

/// The instructions still needed when the destination files marked in
/// `finishedFiles` are done.
Expected<InstructionMask> liveInstructions(const plan::Plan &plan,
                                           const std::vector<bool> &finishedFiles);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_LIVEINSTRUCTIONS_H
