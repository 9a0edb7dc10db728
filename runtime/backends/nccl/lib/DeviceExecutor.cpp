//===- DeviceExecutor.cpp - One rank of a plan on a GPU -------------------===//
// Over 500 lines: a round's device data path (uploads, kernels, messages,
// downloads) is one pipeline whose stages share the executor's slots.
//
//===----------------------------------------------------------------------===//
#include "DeviceExecutor.h"

#include "Device.h"
#include "DeviceTransport.h"
#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/exec/CallerTensors.h"
#include "aoa/runtime/exec/RunLifeCycle.h"
#include "aoa/runtime/storage/StoredRegion.h"
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/StridedCopy.h"
#include "aoa/runtime/transforms/TensorView.h"
#include "aoa/runtime/transforms/TransformStages.h"

#include <algorithm>
#include <optional>

namespace aoa::runtime {

namespace {

using plan::Opcode;

/// Device scratch for a copy's intermediate results starts on 256-byte
/// boundaries, as cudaMalloc's memory does.
uint64_t alignScratch(uint64_t bytes) { return (bytes + 255) / 256 * 256; }

/// The stages of copy `inst` of `round`, or an error.
Expected<std::vector<TransformStage>> stagesOf(const plan::Plan &plan,
                                               const plan::Round &round,
                                               const plan::Instruction &inst) {
  const plan::BufferDecl &in = round.buffers[inst.input];
  const plan::BufferDecl &out = round.buffers[inst.buffer];
  return planTransformStages(plan.steps(inst), in.dtype, in.shape, out.dtype,
                             out.shape);
}

/// The scratch a copy's stages need before the last one.
uint64_t scratchBytesOf(const std::vector<TransformStage> &stages) {
  uint64_t bytes = 0;
  for (size_t k = 0; k + 1 < stages.size(); ++k)
    bytes += alignScratch(stages[k].outputBytes());
  return bytes;
}

/// The most checked-cast stages (Cast.h: castMayFail) of one round of
/// `rank`: each gets a cast-failure word in device memory.
size_t largestCheckedStageCount(const plan::Plan &plan, uint32_t rank) {
  size_t largest = 0;
  if (rank >= plan.programs.size())
    return 0;
  for (const plan::Round &round : plan.programs[rank].rounds) {
    size_t count = 0;
    for (const plan::Instruction &inst : round.instructions)
      if (inst.opcode == Opcode::Copy)
        if (Expected<std::vector<TransformStage>> stages =
                stagesOf(plan, round, inst);
            stages.ok())
          for (const TransformStage &stage : *stages)
            count += castMayFail(stage.from, stage.to) ? 1 : 0;
    largest = std::max(largest, count);
  }
  return largest;
}

/// The most scratch any copy of `rank`'s rounds needs (copies of a round
/// run one after another on one stream, so they share it).
uint64_t largestCopyScratch(const plan::Plan &plan, uint32_t rank) {
  uint64_t largest = 0;
  if (rank >= plan.programs.size())
    return 0;
  for (const plan::Round &round : plan.programs[rank].rounds)
    for (const plan::Instruction &inst : round.instructions)
      if (inst.opcode == Opcode::Copy)
        if (Expected<std::vector<TransformStage>> stages =
                stagesOf(plan, round, inst);
            stages.ok())
          largest = std::max(largest, scratchBytesOf(*stages));
  return largest;
}

class DeviceRun final : public RunLifeCycle {
public:
  DeviceRun(const plan::Plan &plan, const RunOptions &options,
            const RankGroup &group, Device &device, DeviceTransport &transport,
            const JobLauncher &launcher, ProgressMeter *progress,
            std::optional<std::vector<DeviceTensor>> tensors = std::nullopt)
      : RunLifeCycle(plan, options, group, RankScope::OwnRank, progress,
                     launcher),
        device_(device), transport_(transport),
        arenaBytes_(largestRoundArenaBytes(plan, group.rank(),
                                           ReceivedBuffers::Owned)),
        scratchBytes_(largestCopyScratch(plan, group.rank())),
        failureWords_(largestCheckedStageCount(plan, group.rank())),
        givenTensors_(std::move(tensors)) {}

private:
  /// One stage of the pipeline: a round's buffers in pinned host memory
  /// and (at the same offsets) in device memory, and its stream.
  struct Slot {
    DeviceMemory host;
    DeviceMemory device;
    DeviceMemory scratch;
    unsigned stream = 0;
    std::optional<RankRound> round;
    /// Device work was queued and not yet waited for.
    bool queued = false;
    /// Cast-failure words of the round's checked-cast stages (one each,
    /// kNoCastFailure before the copies), in device memory and, once
    /// downloaded after the copies, in pinned host memory.
    DeviceMemory failureDevice;
    DeviceMemory failureHost;
    /// By word: the copy instruction and its stages, and which stage.
    struct CheckedStage {
      uint32_t instruction = 0;
      std::vector<TransformStage> stages;
      size_t stage = 0;
    };
    std::vector<CheckedStage> checked;
  };

  uint64_t hostBufferBytes() const override { return 2 * arenaBytes_; }
  bool writesFiles() const override { return !givenTensors_; }
  Status checkResources() override;
  /// Matches the caller's device tensors to this rank's destination
  /// tensors (loadPlanIntoDeviceTensors).
  Status bindDeviceTensors();
  /// Queues write `i` of the slot's round into its device tensor.
  Status queueWriteToTensor(Slot &slot, uint32_t i);
  Status allocateBuffers() override;
  bool runRounds() override;
  void releaseBuffers() override;

  /// Lays round `r` out in `slot` and reads its sources.
  Status startRound(Slot &slot, size_t r);
  /// Queues the round's uploads, messages, copies and downloads.
  Status queueDeviceWork(Slot &slot);
  Status queueCopy(Slot &slot, uint32_t i);
  /// The first copy (in queue order) whose checked cast met an element
  /// without a result, as an error; nothing is written then.
  Status checkCastFailures(const Slot &slot) const;
  /// Waits for the slot's device work, then writes its files.
  Status finishRound(Slot &slot);
  uint8_t *deviceAddress(const Slot &slot, uint32_t buffer) const {
    return slot.device.data() + (slot.round->buffer(buffer) - slot.host.data());
  }

  Device &device_;
  DeviceTransport &transport_;
  uint64_t arenaBytes_;
  uint64_t scratchBytes_;
  size_t failureWords_;
  /// The stream every round's messages are queued on.
  unsigned transferStream_ = 2;
  Slot slots_[2];
  bool failed_ = false;
  std::optional<std::vector<DeviceTensor>> givenTensors_;
  /// By destination tensor: the caller's device memory (null: not this
  /// rank's).
  std::vector<uint8_t *> tensorData_;
};

Status DeviceRun::bindDeviceTensors() {
  Expected<std::vector<uint8_t *>> bound =
      bindCallerTensors(plan_, rank_, *givenTensors_, "device tensors");
  if (!bound.ok())
    return bound.error();
  tensorData_ = std::move(*bound);
  return Status();
}

Status DeviceRun::queueWriteToTensor(Slot &slot, uint32_t i) {
  const RankRound &round = *slot.round;
  const plan::Instruction &inst = round.instruction(i);
  const plan::StoredTensor &tensor = plan_.destinationTensors[inst.tensor];
  uint8_t *target = tensorData_[inst.tensor];
  const uint8_t *buffer = deviceAddress(slot, inst.buffer);
  size_t elementSize = dtypeSize(tensor.dtype);
  const plan::BufferDecl &decl = round.round().buffers[inst.buffer];
  if (!target || decl.dtype != tensor.dtype ||
      decl.bytes() != inst.region.volume() * int64_t(elementSize))
    return Error{round.where() + ": writing " + tensor.key +
                     inst.region.toString() + " from a buffer of " +
                     std::string(dtypeName(decl.dtype)) +
                     formatShape(decl.shape) + " that does not fit it",
                 "the plan is inconsistent; recompile it"};
  Status status;
  if (!tensor.flat) {
    // One strided copy of the region into the stored box.
    std::vector<int64_t> shape = inst.region.shape();
    Box whole = Box::fromShape(shape);
    Box inStored = inst.region.relativeTo(tensor.box);
    Expected<StridedCopy> copy = describeRegionCopy(
        TensorView(buffer, size_t(decl.bytes()), tensor.dtype, shape), whole,
        MutableTensorView(target, size_t(tensor.storedElements()) * elementSize,
                          tensor.dtype, tensor.box.shape()),
        inStored, Permutation::identity(shape.size()));
    if (!copy.ok())
      return Error{round.where() + ": " + copy.error().message,
                   copy.error().hint};
    status = device_.copy(slot.stream, *copy);
  } else {
    // A flat range: its runs, each a plain copy.
    Status visited = forEachStoredRun(
        tensor.box, tensor.flat, inst.region, [&](const StoredRun &run) {
          status = device_.copyBytes(
              slot.stream, target + size_t(run.storedOffset) * elementSize,
              buffer + size_t(run.regionOffset) * elementSize,
              uint64_t(run.count) * elementSize);
          return status.ok();
        });
    if (status.ok())
      status = visited;
  }
  if (!status.ok())
    return Error{round.where() + ": " + status.error().message,
                 status.error().hint};
  bytesWrittenToMemory_ += uint64_t(decl.bytes());
  return Status();
}

Status DeviceRun::checkResources() {
  if (givenTensors_)
    if (Status status = bindDeviceTensors(); !status.ok())
      return status;
  uint64_t needed = 2 * (arenaBytes_ + scratchBytes_);
  uint64_t available = device_.freeMemory();
  if (available && needed > available)
    return Error{"this rank needs " + formatByteSize(int64_t(needed)) +
                     " of GPU memory (two rounds' buffers of " +
                     formatByteSize(int64_t(arenaBytes_)) + " and copy "
                     "scratch of " + formatByteSize(int64_t(scratchBytes_)) +
                     " each), but " + device_.name() + " has " +
                     formatByteSize(int64_t(available)) + " free",
                 "recompile the plan with a smaller --memory-budget"};
  if (device_.streamCount() < 3)
    return Error{device_.name() + " offers fewer than 3 streams",
                 "this is a bug in aoa-run; please report it"};
  return Status();
}

Status DeviceRun::allocateBuffers() {
  for (unsigned s = 0; s < 2; ++s) {
    Slot &slot = slots_[s];
    slot.stream = s;
    Expected<DeviceMemory> host = device_.allocatePinnedHost(arenaBytes_);
    if (!host.ok())
      return host.error();
    slot.host = std::move(*host);
    Expected<DeviceMemory> device = device_.allocate(arenaBytes_);
    if (!device.ok())
      return device.error();
    slot.device = std::move(*device);
    Expected<DeviceMemory> scratch = device_.allocate(scratchBytes_);
    if (!scratch.ok())
      return scratch.error();
    slot.scratch = std::move(*scratch);
    uint64_t failureBytes = failureWords_ * sizeof(unsigned long long);
    Expected<DeviceMemory> failureDevice = device_.allocate(failureBytes);
    if (!failureDevice.ok())
      return failureDevice.error();
    slot.failureDevice = std::move(*failureDevice);
    Expected<DeviceMemory> failureHost =
        device_.allocatePinnedHost(failureBytes);
    if (!failureHost.ok())
      return failureHost.error();
    slot.failureHost = std::move(*failureHost);
  }
  return Status();
}

void DeviceRun::releaseBuffers() {
  bool inFlight = slots_[0].queued || slots_[1].queued;
  if (failed_ && inFlight)
    transport_.abort();
  for (unsigned s = 0; s < device_.streamCount(); ++s)
    (void)device_.synchronize(s);
  for (Slot &slot : slots_) {
    slot.round.reset();
    slot.queued = false;
    slot.host = DeviceMemory();
    slot.device = DeviceMemory();
    slot.scratch = DeviceMemory();
    slot.failureDevice = DeviceMemory();
    slot.failureHost = DeviceMemory();
    slot.checked.clear();
  }
}

Status DeviceRun::startRound(Slot &slot, size_t r) {
  slot.round.emplace(liveRound(rank_, r));
  if (slot.round->empty())
    return Status();
  slot.round->layOutBuffers(slot.host.data(), ReceivedBuffers::Owned);
  return runReads(*slot.round);
}

Status DeviceRun::queueCopy(Slot &slot, uint32_t i) {
  const RankRound &round = *slot.round;
  const plan::Instruction &inst = round.instruction(i);
  Expected<std::vector<TransformStage>> stages =
      stagesOf(plan_, round.round(), inst);
  if (!stages.ok())
    return Error{round.where() + ": " + stages.error().message,
                 stages.error().hint};
  const uint8_t *from = deviceAddress(slot, inst.input);
  uint64_t fromBytes = round.bufferBytes(inst.input);
  uint64_t scratchUsed = 0;
  for (size_t k = 0; k < stages->size(); ++k) {
    const TransformStage &stage = (*stages)[k];
    bool last = k + 1 == stages->size();
    uint8_t *to = last ? deviceAddress(slot, inst.buffer)
                       : slot.scratch.data() + scratchUsed;
    uint64_t toBytes = stage.outputBytes();
    if (!last)
      scratchUsed += alignScratch(toBytes);
    Box whole = Box::fromShape(stage.inputShape);
    Expected<StridedCopy> copy = describeRegionCopy(
        TensorView(from, size_t(fromBytes), stage.from, stage.inputShape),
        whole,
        MutableTensorView(to, size_t(toBytes), stage.to, stage.outputShape()),
        stage.permutation.apply(whole), stage.permutation);
    if (!copy.ok())
      return Error{round.where() + ": copy: " + copy.error().message,
                   copy.error().hint};
    if (castMayFail(stage.from, stage.to)) {
      // Its own word; queueDeviceWork uploaded kNoCastFailure there.
      size_t word = slot.checked.size();
      if (word >= failureWords_)
        return Error{round.where() + ": copy: more checked casts than "
                                     "planned (a bug in aoa-run)",
                     "please report it with the plan that was run"};
      copy->castFailure =
          reinterpret_cast<unsigned long long *>(slot.failureDevice.data()) +
          word;
      slot.checked.push_back({i, *stages, k});
    }
    if (Status status = device_.copy(slot.stream, *copy); !status.ok())
      return Error{round.where() + ": " + status.error().message,
                   status.error().hint};
    from = to;
    fromBytes = toBytes;
  }
  return Status();
}

Status DeviceRun::queueDeviceWork(Slot &slot) {
  if (!slot.round || slot.round->empty())
    return Status();
  const RankRound &round = *slot.round;
  const plan::Round &decls = round.round();
  // Which buffers the GPU needs (a message or a copy reads them) and which
  // it produces (a message or a copy defines them).
  std::vector<uint8_t> neededOnDevice(decls.buffers.size(), 0);
  std::vector<uint8_t> madeOnDevice(decls.buffers.size(), 0);
  for (uint32_t i : round.sends())
    for (uint32_t b : round.instruction(i).buffers)
      neededOnDevice[b] = 1;
  for (uint32_t i : round.receives())
    for (uint32_t b : round.instruction(i).buffers)
      madeOnDevice[b] = 1;
  for (const std::vector<uint32_t> &level : round.copyLevels())
    for (uint32_t i : level) {
      neededOnDevice[round.instruction(i).input] = 1;
      madeOnDevice[round.instruction(i).buffer] = 1;
    }
  if (givenTensors_)
    for (uint32_t i : round.writes())
      neededOnDevice[round.instruction(i).buffer] = 1;

  Status status;
  for (uint32_t i : round.reads()) {
    uint32_t b = round.instruction(i).buffer;
    if (neededOnDevice[b] && status.ok())
      status = device_.upload(slot.stream, deviceAddress(slot, b),
                              round.buffer(b), round.bufferBytes(b));
  }
  // The messages are queued even after a failed upload: the peers queue
  // theirs, and an unmatched message would stall them (the next agreement
  // aborts the transport instead).
  if (!round.sends().empty() || !round.receives().empty()) {
    Status exchanged = device_.streamWaitsFor(transferStream_, slot.stream);
    if (exchanged.ok())
      exchanged = transport_.exchange(
          round, [&](uint32_t b) { return deviceAddress(slot, b); }, device_,
          transferStream_, bytesExchanged_);
    if (exchanged.ok())
      exchanged = device_.streamWaitsFor(slot.stream, transferStream_);
    if (status.ok())
      status = exchanged;
  }
  // Every cast-failure word starts empty; the copies lower them and the
  // words come back with the round's downloads (finishRound checks them).
  slot.checked.clear();
  auto *words =
      reinterpret_cast<unsigned long long *>(slot.failureHost.data());
  std::fill(words, words + failureWords_, kNoCastFailure);
  if (failureWords_ > 0 && status.ok())
    status = device_.upload(slot.stream, slot.failureDevice.data(), words,
                            failureWords_ * sizeof(unsigned long long));
  for (const std::vector<uint32_t> &level : round.copyLevels())
    for (uint32_t i : level)
      if (status.ok())
        status = queueCopy(slot, i);
  if (!slot.checked.empty() && status.ok())
    status = device_.download(slot.stream, words, slot.failureDevice.data(),
                              slot.checked.size() * sizeof(unsigned long long));
  for (uint32_t i : round.writes()) {
    uint32_t b = round.instruction(i).buffer;
    if (!status.ok())
      break;
    if (givenTensors_)
      status = queueWriteToTensor(slot, i);
    else if (madeOnDevice[b])
      status = device_.download(slot.stream, round.buffer(b),
                                deviceAddress(slot, b), round.bufferBytes(b));
  }
  return withoutRank(std::move(status));
}

Status DeviceRun::checkCastFailures(const Slot &slot) const {
  const auto *words =
      reinterpret_cast<const unsigned long long *>(slot.failureHost.data());
  for (size_t w = 0; w < slot.checked.size(); ++w) {
    if (words[w] == kNoCastFailure)
      continue;
    const Slot::CheckedStage &checked = slot.checked[w];
    const TransformStage &stage = checked.stages[checked.stage];
    return slot.round->castFailure(
        checked.instruction, stage.from, stage.to,
        transformOutputOffset(checked.stages, checked.stage, words[w]));
  }
  return Status();
}

Status DeviceRun::finishRound(Slot &slot) {
  if (!slot.round)
    return Status();
  Status status;
  if (slot.queued) {
    slot.queued = false;
    status = device_.synchronize(slot.stream);
    if (!status.ok())
      status = Error{slot.round->where() + ": " + status.error().message,
                     status.error().hint};
    if (status.ok())
      status = checkCastFailures(slot);
  }
  if (status.ok() && !slot.round->empty() && !givenTensors_)
    status = runWrites(*slot.round);
  slot.round.reset();
  return withoutRank(std::move(status));
}

bool DeviceRun::runRounds() {
  std::vector<size_t> rounds;
  for (size_t r = 0; r < roundCount(); ++r)
    if (roundHasWork(r))
      rounds.push_back(r);
  // The first failure of this rank; later steps are skipped, but the
  // agreements go on, so every rank learns of it.
  Status pending;
  auto keep = [&](Status status) {
    if (pending.ok())
      pending = std::move(status);
  };
  if (!rounds.empty())
    keep(startRound(slots_[0], rounds[0]));
  for (size_t k = 0; k < rounds.size(); ++k) {
    Slot &current = slots_[k % 2];
    Slot &other = slots_[(k + 1) % 2];
    if (!agree(pending)) {
      failed_ = true;
      return false;
    }
    keep(queueDeviceWork(current));
    current.queued = true;
    // While the GPU works on this round: the files of the round before,
    // then the sources of the round after, in the other slot.
    keep(finishRound(other));
    if (k + 1 < rounds.size() && pending.ok())
      keep(startRound(other, rounds[k + 1]));
  }
  // The last round's files, unless this rank failed: a round whose device
  // work failed (a message, a copy) has buffers that were never filled, and
  // writing them would commit wrong files that a resume trusts.
  if (!rounds.empty() && pending.ok())
    keep(finishRound(slots_[(rounds.size() - 1) % 2]));
  if (!agree(pending)) {
    failed_ = true;
    return false;
  }
  return true;
}

} // namespace

RankRunResult loadPlanIntoDeviceTensors(const plan::Plan &plan,
                                        const RunOptions &options,
                                        const RankGroup &group, Device &device,
                                        DeviceTransport &transport,
                                        std::vector<DeviceTensor> tensors,
                                        const JobLauncher &launcher) {
  return DeviceRun(plan, options, group, device, transport, launcher, nullptr,
                   std::move(tensors))
      .run();
}

RankRunResult runPlanOnDevice(const plan::Plan &plan, const RunOptions &options,
                              const RankGroup &group, Device &device,
                              DeviceTransport &transport,
                              const JobLauncher &launcher,
                              ProgressMeter *progress) {
  return DeviceRun(plan, options, group, device, transport, launcher, progress)
      .run();
}

} // namespace aoa::runtime
