//===- NcclJob.cpp - The NCCL communicators of an nccl job ----------------===//
//
// Compiled only with AOA_ENABLE_CUDA. Every NCCL call goes through the
// table NcclLibrary::load() resolves at run time (NcclLibrary.h), so
// nothing here needs libnccl to be linked.
//
//===----------------------------------------------------------------------===//
#include "NcclJob.h"

#include "NcclLibrary.h"

#include "Device.h"
#include "Rendezvous.h"
#include "aoa/runtime/backends/MpiBackend.h"
#include "aoa/runtime/exec/RankRound.h"
#include "aoa/runtime/support/ContentHash.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace aoa::runtime {

namespace {

Error ncclError(const NcclLibrary &nccl, const std::string &what,
                ncclResult_t code, ncclComm_t comm = nullptr) {
  std::string detail = nccl.ncclGetErrorString(code);
  if (const char *last = nccl.ncclGetLastError(comm); last && *last)
    detail += std::string(": ") + last;
  return Error{what + " failed: " + detail,
               "NCCL_DEBUG=WARN shows NCCL's own account of the failure"};
}

Status checkNccl(const NcclLibrary &nccl, const std::string &what,
                 ncclResult_t code, ncclComm_t comm = nullptr) {
  if (code == ncclSuccess)
    return Status();
  return ncclError(nccl, what, code, comm);
}

Status checkCuda(const std::string &what, cudaError_t code) {
  if (code == cudaSuccess)
    return Status();
  return Error{what + ": " + cudaGetErrorString(code), ""};
}

std::string idBytes(const ncclUniqueId &id) {
  return std::string(id.internal, sizeof(id.internal));
}

ncclUniqueId idFromBytes(const std::string &bytes, size_t offset) {
  ncclUniqueId id;
  std::memcpy(id.internal, bytes.data() + offset, sizeof(id.internal));
  return id;
}

/// "rank 3" or "ranks 1, 3".
std::string rankList(const std::vector<uint32_t> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

/// Collectives over NCCL communicators (a job without MPI): values go to a
/// device buffer, are reduced there, and come back; every call waits.
class NcclRankGroup final : public RankGroup {
public:
  NcclRankGroup(const NcclLibrary &nccl, ncclComm_t world, uint32_t rank,
                uint32_t size)
      : RankGroup(rank, size, 0, 1), nccl_(nccl), world_(world) {}
  ~NcclRankGroup() override {
    if (scratch_)
      cudaFree(scratch_);
    if (host_)
      nccl_.ncclCommDestroy(host_);
    if (world_)
      nccl_.ncclCommDestroy(world_);
    if (stream_)
      cudaStreamDestroy(stream_);
  }

  /// Creates the stream, finds the processes on this host and splits a
  /// communicator for them.
  Status start() {
    if (Status status = checkCuda(
            "cudaStreamCreate",
            cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        !status.ok())
      return status;
    char name[256] = {};
    ::gethostname(name, sizeof(name) - 1);
    uint64_t hostHash = contentHash(name, std::strlen(name)) | 1;
    // Each rank's host hash at its own index; a sum gathers them.
    std::vector<uint64_t> hashes(size(), 0);
    hashes[rank()] = hostHash;
    if (Status status = reduce(hashes, ncclSum, world_); !status.ok())
      return status;
    uint32_t hostRank = 0, hostSize = 0, color = rank();
    for (uint32_t r = 0; r < size(); ++r)
      if (hashes[r] == hostHash) {
        color = std::min(color, r);
        hostRank += r < rank() ? 1 : 0;
        ++hostSize;
      }
    setPlace(rank(), size(), hostRank, hostSize);
    return checkNccl(
        nccl_, "ncclCommSplit (the ranks of this host)",
        nccl_.ncclCommSplit(world_, int(color), int(rank()), &host_, nullptr),
        world_);
  }

  std::string broadcast(std::string text) const override {
    std::vector<uint64_t> size = {text.size()};
    // A sum of rank 0's size and zeros is rank 0's size.
    if (rank() != 0)
      size[0] = 0;
    must(reduce(size, ncclSum, world_));
    text.resize(size_t(size[0]));
    if (text.empty())
      return text;
    must(ensureScratch(text.size()));
    must(checkCuda("cudaMemcpyAsync",
                   cudaMemcpyAsync(scratch_, text.data(), text.size(),
                                   cudaMemcpyHostToDevice, stream_)));
    must(checkNccl(nccl_, "ncclBroadcast",
                   nccl_.ncclBroadcast(scratch_, scratch_, text.size(),
                                       ncclChar, 0, world_, stream_),
                   world_));
    must(checkCuda("cudaMemcpyAsync",
                   cudaMemcpyAsync(text.data(), scratch_, text.size(),
                                   cudaMemcpyDeviceToHost, stream_)));
    must(checkCuda("cudaStreamSynchronize", cudaStreamSynchronize(stream_)));
    return text;
  }
  void sum(std::vector<uint64_t> &values) const override {
    must(reduce(values, ncclSum, world_));
  }
  void sumOnHost(std::vector<uint64_t> &values) const override {
    must(reduce(values, ncclSum, host_));
  }
  void max(std::vector<uint64_t> &values) const override {
    must(reduce(values, ncclMax, world_));
  }
  void bitwiseOrOnRankZero(std::vector<uint64_t> &values) const override {
    // NCCL has no bitwise or: gather every rank's values, or them on rank 0.
    size_t n = values.size();
    if (n == 0)
      return;
    std::vector<uint64_t> all(n * size(), 0);
    std::copy(values.begin(), values.end(), all.begin() + n * rank());
    must(reduce(all, ncclSum, world_));
    if (rank() != 0)
      return;
    for (uint32_t r = 0; r < size(); ++r)
      for (size_t i = 0; i < n; ++i)
        values[i] |= all[r * n + i];
  }
  void barrier() const override {
    std::vector<uint64_t> token = {1};
    must(reduce(token, ncclSum, world_));
  }

private:
  /// A collective that fails leaves the job unable to agree on anything:
  /// the process reports it and exits rather than guess.
  static void must(const Status &status) {
    if (status.ok())
      return;
    std::string text = "aoa-run: error: an agreement between the ranks "
                       "failed: " +
                       status.error().toString() + "\n";
    ::write(STDERR_FILENO, text.data(), text.size());
    std::_Exit(1);
  }

  Status ensureScratch(size_t bytes) const {
    if (bytes <= scratchBytes_)
      return Status();
    if (scratch_)
      cudaFree(scratch_);
    scratch_ = nullptr;
    scratchBytes_ = 0;
    if (Status status = checkCuda("cudaMalloc", cudaMalloc(&scratch_, bytes));
        !status.ok())
      return status;
    scratchBytes_ = bytes;
    return Status();
  }

  Status reduce(std::vector<uint64_t> &values, ncclRedOp_t op,
                ncclComm_t comm) const {
    if (values.empty())
      return Status();
    size_t bytes = values.size() * sizeof(uint64_t);
    if (Status status = ensureScratch(bytes); !status.ok())
      return status;
    Status status = checkCuda("cudaMemcpyAsync",
                              cudaMemcpyAsync(scratch_, values.data(), bytes,
                                              cudaMemcpyHostToDevice, stream_));
    if (status.ok())
      status = checkNccl(nccl_, "ncclAllReduce",
                         nccl_.ncclAllReduce(scratch_, scratch_, values.size(),
                                             ncclUint64, op, comm, stream_),
                         comm);
    if (status.ok())
      status = checkCuda("cudaMemcpyAsync",
                         cudaMemcpyAsync(values.data(), scratch_, bytes,
                                         cudaMemcpyDeviceToHost, stream_));
    if (status.ok())
      status = checkCuda("cudaStreamSynchronize",
                         cudaStreamSynchronize(stream_));
    return status;
  }

  const NcclLibrary &nccl_;
  ncclComm_t world_ = nullptr;
  ncclComm_t host_ = nullptr;
  cudaStream_t stream_ = nullptr;
  mutable void *scratch_ = nullptr;
  mutable size_t scratchBytes_ = 0;
};

/// A round's messages as one NCCL group of ncclSend/ncclRecv, one per
/// buffer (sender and receiver list buffers of equal types in equal order).
class NcclTransport final : public DeviceTransport {
public:
  NcclTransport(const NcclLibrary &nccl, ncclComm_t comm)
      : nccl_(nccl), comm_(comm) {}
  ~NcclTransport() override {
    if (comm_)
      nccl_.ncclCommDestroy(comm_);
  }

  Status exchange(const RankRound &round,
                  llvm::function_ref<uint8_t *(uint32_t)> address,
                  Device &device, unsigned stream,
                  uint64_t &received) override {
    if (!comm_)
      return Error{"the NCCL communicator was aborted after a failure", ""};
    auto cudaStream = static_cast<cudaStream_t>(device.nativeStream(stream));
    Status status =
        checkNccl(nccl_, "ncclGroupStart", nccl_.ncclGroupStart(), comm_);
    if (!status.ok())
      return status;
    for (uint32_t i : round.receives()) {
      const plan::Instruction &inst = round.instruction(i);
      for (uint32_t b : inst.buffers) {
        received += round.bufferBytes(b);
        if (status.ok())
          status = checkNccl(
              nccl_, "ncclRecv from rank " + std::to_string(inst.peer),
              nccl_.ncclRecv(address(b), size_t(round.bufferBytes(b)),
                             ncclUint8, int(inst.peer), comm_, cudaStream),
              comm_);
      }
    }
    for (uint32_t i : round.sends()) {
      const plan::Instruction &inst = round.instruction(i);
      for (uint32_t b : inst.buffers)
        if (status.ok())
          status = checkNccl(
              nccl_, "ncclSend to rank " + std::to_string(inst.peer),
              nccl_.ncclSend(address(b), size_t(round.bufferBytes(b)),
                             ncclUint8, int(inst.peer), comm_, cudaStream),
              comm_);
    }
    Status ended =
        checkNccl(nccl_, "ncclGroupEnd", nccl_.ncclGroupEnd(), comm_);
    return status.ok() ? ended : status;
  }

  void abort() override {
    if (comm_)
      nccl_.ncclCommAbort(comm_);
    comm_ = nullptr;
  }

private:
  const NcclLibrary &nccl_;
  ncclComm_t comm_;
};

} // namespace

struct NcclJob::Handles {};

NcclJob::NcclJob() : handles_(std::make_unique<Handles>()) {}
NcclJob::~NcclJob() {
  transport_.reset();
  ownGroup_.reset();
}

bool NcclJob::available() { return true; }

Expected<std::string> NcclJob::version() {
  Expected<const NcclLibrary *> nccl = NcclLibrary::load();
  if (!nccl.ok())
    return nccl.error();
  return (*nccl)->version();
}

Expected<std::string> NcclJob::probeVersion(const std::string &library) {
  Expected<NcclLibrary> nccl = NcclLibrary::open(library);
  if (!nccl.ok())
    return nccl.error();
  return nccl->version();
}

Expected<std::unique_ptr<NcclJob>> NcclJob::start(const NcclBootstrap &bootstrap,
                                                  Device &device) {
  if (!device.isGpu())
    return Error{"NCCL needs a CUDA device, not " + device.name(),
                 "this is a bug in aoa-run; please report it"};
  std::unique_ptr<NcclJob> job(new NcclJob());
  uint32_t rank = bootstrap.mpi ? bootstrap.mpi->rank() : bootstrap.rank;
  uint32_t size = bootstrap.mpi ? bootstrap.mpi->size() : bootstrap.size;
  // Under MPI one communicator (messages); otherwise a second one for the
  // agreements.
  size_t ids = bootstrap.mpi ? 1 : 2;
  // Every rank loads NCCL here; under MPI a rank that cannot joins the
  // agreement below as failed instead of leaving the others waiting in it.
  Expected<const NcclLibrary *> loaded = NcclLibrary::load();
  Status status = loaded.status();
  std::string secret;
  if (status.ok() && rank == 0) {
    for (size_t k = 0; k < ids && status.ok(); ++k) {
      ncclUniqueId id;
      status = checkNccl(**loaded, "ncclGetUniqueId",
                         (*loaded)->ncclGetUniqueId(&id));
      secret += idBytes(id);
    }
  }
  size_t secretBytes = ids * sizeof(ncclUniqueId::internal);
  if (bootstrap.mpi) {
    std::vector<uint32_t> failed = bootstrap.mpi->failedRanks(!status.ok());
    if (!status.ok())
      return status.error();
    if (!failed.empty())
      return Error{"NCCL could not be started on " + rankList(failed),
                   "see the message of the rank that failed"};
    secret = bootstrap.mpi->broadcast(std::move(secret));
  } else if (size > 1) {
    if (status.ok())
      status = rank == 0 ? publishRendezvous(bootstrap.rendezvousDirectory,
                                             secret)
                         : Status();
    if (!status.ok())
      return status.error();
    if (rank != 0) {
      Expected<std::string> shared = awaitRendezvous(
          bootstrap.rendezvousDirectory, secretBytes, bootstrap.timeout);
      if (!shared.ok())
        return shared.error();
      secret = std::move(*shared);
    }
  } else if (!status.ok()) {
    return status.error();
  }

  const NcclLibrary &nccl = **loaded;
  ncclComm_t data = nullptr;
  if (Status joined =
          checkNccl(nccl,
                    "ncclCommInitRank (rank " + std::to_string(rank) + " of " +
                        std::to_string(size) + ")",
                    nccl.ncclCommInitRank(&data, int(size),
                                          idFromBytes(secret, 0), int(rank)));
      !joined.ok())
    return joined.error();
  job->transport_ = std::make_unique<NcclTransport>(nccl, data);
  if (bootstrap.mpi) {
    job->group_ = bootstrap.mpi;
    return job;
  }
  ncclComm_t control = nullptr;
  if (Status joined = checkNccl(
          nccl, "ncclCommInitRank (agreements)",
          nccl.ncclCommInitRank(
              &control, int(size),
              idFromBytes(secret, sizeof(ncclUniqueId::internal)), int(rank)));
      !joined.ok())
    return joined.error();
  auto group = std::make_unique<NcclRankGroup>(nccl, control, rank, size);
  if (Status started = group->start(); !started.ok())
    return started.error();
  // Every rank has joined: the rendezvous file has served its purpose.
  group->barrier();
  if (rank == 0 && size > 1)
    if (Status removed = removeRendezvous(bootstrap.rendezvousDirectory);
        !removed.ok())
      return removed.error();
  job->ownGroup_ = std::move(group);
  job->group_ = job->ownGroup_.get();
  return job;
}

} // namespace aoa::runtime
