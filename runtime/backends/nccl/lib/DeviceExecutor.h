//===- DeviceExecutor.h - One rank of a plan on a GPU -----------*- C++ -*-===//
//
// The nccl backend (docs/aoa-run.md): one process per rank, each with a GPU
// (Device.h). The job's control flow (agreements, the destination, resume,
// metadata.json) is every backend's (aoa/runtime/exec/RunLifeCycle.h);
// only a round's data path differs:
//
//   reads     source files -> pinned host buffers (CPU threads)
//   uploads   the buffers a message or a copy needs -> GPU memory
//   exchange  ncclSend/ncclRecv of the round in one group call, on a
//             transfer stream shared by all rounds (NCCL orders them)
//   copies    permutation and cast fused in one strided-copy kernel per
//             transform stage (TransformStages.h, StridedCopy.h)
//   downloads the written buffers a message or a copy produced -> pinned
//             host buffers
//   writes    pinned host buffers -> destination files (CPU threads)
//
// A buffer that is read and written unchanged never visits the GPU.
// Consecutive rounds overlap: two pipeline slots (pinned host memory, GPU
// memory and a stream each) alternate, so while the GPU uploads, exchanges,
// transforms and downloads round r on one stream (while round r-1 still
// finishes on the other), the CPU threads write round r-1's files and read
// round r+1's sources. The ranks agree before each round's messages are
// queued, so a failure stops every rank before any message is left without
// its peer; a transport with messages in flight is aborted.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICEEXECUTOR_H
#define AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICEEXECUTOR_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/exec/CallerTensors.h"
#include "aoa/runtime/exec/RankGroup.h"
#include "aoa/runtime/exec/RankRunResult.h"
#include "aoa/runtime/exec/RunOptions.h"

#include <string>
#include <vector>

namespace aoa::runtime {

class Device;
class DeviceTransport;
class ProgressMeter;

/// Runs this process's rank of `plan` (already read and verified) on
/// `device`, with messages over `transport` and agreements over `group`.
/// Collective over `group`. `progress`, given on rank 0, reports the bytes
/// written by all ranks.
RankRunResult runPlanOnDevice(const plan::Plan &plan, const RunOptions &options,
                              const RankGroup &group, Device &device,
                              DeviceTransport &transport,
                              const JobLauncher &launcher,
                              ProgressMeter *progress = nullptr);

/// A destination tensor that the caller holds in device memory (on
/// `device`): one tensor of one of the plan's destination files, named by
/// the file's path (as the plan gives it) and the tensor's name in it, laid
/// out as the file would store it (row-major over its stored shape, the
/// plan's dtype). Bound as every caller's tensors are (CallerTensors.h).
using DeviceTensor = CallerTensor;

/// The library entry point for a training process: runs this process's rank
/// of `plan` like runPlanOnDevice, but its writes go into `tensors` (device
/// memory on `device`) instead of files: no destination directory, journal
/// or metadata.json (options.destinationDirectory is ignored). `tensors`
/// must hold every tensor of this rank's destination files, each with its
/// exact size, and no other; otherwise nothing is touched and the error
/// says which. Collective over `group`.
RankRunResult loadPlanIntoDeviceTensors(const plan::Plan &plan,
                                        const RunOptions &options,
                                        const RankGroup &group, Device &device,
                                        DeviceTransport &transport,
                                        std::vector<DeviceTensor> tensors,
                                        const JobLauncher &launcher = {});

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_NCCL_LIB_DEVICEEXECUTOR_H
