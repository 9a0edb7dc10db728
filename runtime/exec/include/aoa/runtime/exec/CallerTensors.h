//===- CallerTensors.h - Destination tensors in caller memory ---*- C++ -*-===//
//
// A library caller (a training process) may take a rank's destination
// tensors in memory it owns instead of as files: the nccl backend's device
// tensors (loadPlanIntoDeviceTensors) and the local backend's host tensors
// (loadRankLocally). Both bind the caller's memory to the plan's
// destination tensors the same way, refusing, before anything is touched,
// memory of the wrong size, a tensor given twice or not at all, and one the
// rank does not write; the binding lives here so that the two agree.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_CALLERTENSORS_H
#define AOA_RUNTIME_EXEC_CALLERTENSORS_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace aoa::runtime {

/// One tensor of one of the plan's destination files in the caller's
/// memory, laid out as the file would store it (row-major over its stored
/// shape, in the plan's dtype). `file` is the file's path as the plan gives
/// it; empty: the tensor is found by its name alone, which must then name
/// one tensor of the rank's files.
struct CallerTensor {
  std::string file;
  std::string name;
  void *data = nullptr;
  uint64_t bytes = 0;
};

/// The bytes destination tensor `tensor` takes in memory.
uint64_t destinationTensorBytes(const plan::Plan &plan, uint32_t tensor);

/// Binds `tensors` to `rank`'s destination tensors: by destination tensor
/// of the plan, the caller's memory (null for the tensors of other ranks
/// and for tensors without elements). Every tensor of the rank's files must
/// be given once, with its exact size; otherwise the error lists every
/// problem (`what` names the memory: "device tensors", "tensors").
Expected<std::vector<uint8_t *>>
bindCallerTensors(const plan::Plan &plan, uint32_t rank,
                  const std::vector<CallerTensor> &tensors,
                  const std::string &what);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_CALLERTENSORS_H
