//===- NcclRank.cpp -------------------------------------------------------===//
#include "aoa/runtime/backends/NcclBackend.h"

#include "Device.h"
#include "DeviceExecutor.h"
#include "DeviceTransport.h"
#include "NcclJob.h"
#include "aoa/runtime/backends/MpiBackend.h"

#include <chrono>
#include <cstdlib>

namespace aoa::runtime {

namespace {

/// An unsigned number from the environment variable `name`, if set.
std::optional<unsigned> environmentNumber(const char *name, Status &status) {
  const char *value = std::getenv(name);
  if (!value)
    return std::nullopt;
  char *end = nullptr;
  unsigned long number = std::strtoul(value, &end, 10);
  if (!*value || *end || number > 1u << 20) {
    status = Error{std::string(name) + "='" + value + "' is not a rank number",
                   "set RANK, WORLD_SIZE and LOCAL_RANK to non-negative "
                   "integers, or start aoa-run with mpirun"};
    return std::nullopt;
  }
  return unsigned(number);
}

/// A job that mpirun did not start: RANK, WORLD_SIZE and the flags must
/// describe one it can run.
std::optional<Error> checkJobWithoutLauncher(const NcclBootstrap &bootstrap,
                                             const NcclRankOptions &options) {
  if (bootstrap.rank >= bootstrap.size)
    return Error{
        "RANK=" + std::to_string(bootstrap.rank) +
            " is not below WORLD_SIZE=" + std::to_string(bootstrap.size),
        "number the processes of the job 0 .. WORLD_SIZE-1"};
  if (bootstrap.size > 1 && options.emulateDevice)
    return Error{"the emulated device moves messages over MPI, but this job "
                 "of " +
                     std::to_string(bootstrap.size) +
                     " processes was not started by mpirun",
                 "start it with mpirun -np " + std::to_string(bootstrap.size)};
  if (bootstrap.size > 1 && bootstrap.rendezvousDirectory.empty())
    return Error{
        "the nccl backend without mpirun needs --rendezvous DIR for a job "
        "of " +
            std::to_string(bootstrap.size) + " processes (WORLD_SIZE)",
        "pass the same directory, one every rank sees, to every rank; or "
        "start the job with mpirun"};
  return std::nullopt;
}

/// This process's device: the emulated one, or the GPU that LOCAL_RANK
/// names (else the process's rank on its host, modulo the GPUs there).
Expected<std::unique_ptr<Device>>
openDevice(const NcclRankOptions &options, MpiSession *session, unsigned rank,
           std::optional<unsigned> localRank) {
  if (options.emulateDevice)
    return makeEmulatedDevice();
  std::string why;
  int gpus = cudaDeviceCount(&why);
  unsigned onHost = session ? session->hostRank() : rank;
  int ordinal =
      int(localRank ? *localRank : (gpus ? onHost % unsigned(gpus) : 0u));
  return openCudaDevice(ordinal);
}

} // namespace

NcclRank::NcclRank() = default;
NcclRank::~NcclRank() = default;

NcclRank::Start NcclRank::start(const NcclRankOptions &options) {
  Start result;
  Status environment;
  std::optional<unsigned> envRank = environmentNumber("RANK", environment);
  std::optional<unsigned> envSize = environmentNumber("WORLD_SIZE", environment);
  std::optional<unsigned> localRank = environmentNumber("LOCAL_RANK", environment);
  if (!environment.ok()) {
    result.error = environment.error();
    return result;
  }

  std::unique_ptr<NcclRank> self(new NcclRank());
  // Under mpirun, MPI shares the NCCL id and carries the agreements.
  if (options.underLauncher && MpiSession::available()) {
    Expected<std::unique_ptr<MpiSession>> started = MpiSession::start();
    if (!started.ok()) {
      result.error = started.error();
      return result;
    }
    self->session_ = std::move(*started);
  }
  MpiSession *session = self->session_.get();
  NcclBootstrap bootstrap;
  bootstrap.mpi = session;
  bootstrap.rank = session ? session->rank() : envRank.value_or(0);
  bootstrap.size = session ? session->size() : envSize.value_or(1);
  bootstrap.rendezvousDirectory = options.rendezvousDirectory;
  if (const char *timeout = std::getenv("AOA_RENDEZVOUS_TIMEOUT"))
    bootstrap.timeout = std::chrono::seconds(std::strtoul(timeout, nullptr, 10));
  result.who =
      bootstrap.size > 1 ? "rank " + std::to_string(bootstrap.rank) + ": " : "";
  // Before any collective exists, each process reports its own failure.
  auto fail = [&](Error error) {
    result.error = std::move(error);
    if (session)
      session->failedRanks(true);
    return std::move(result);
  };
  auto othersFailed = [&]() {
    return session && !session->failedRanks(false).empty();
  };
  if (!session)
    if (std::optional<Error> refused =
            checkJobWithoutLauncher(bootstrap, options))
      return fail(std::move(*refused));
  Expected<std::unique_ptr<Device>> opened =
      openDevice(options, session, bootstrap.rank, localRank);
  if (!opened.ok())
    return fail(opened.error());
  self->device_ = std::move(*opened);
  if (othersFailed())
    return result;

  if (options.emulateDevice) {
    if (session) {
      self->hostTransport_ = makeMpiHostTransport(*session);
      self->group_ = session;
    } else {
      self->hostTransport_ = makeSingleRankTransport();
      self->singleGroup_ = makeSingleRankGroup();
      self->group_ = self->singleGroup_.get();
    }
    self->transport_ = self->hostTransport_.get();
  } else {
    Expected<std::unique_ptr<NcclJob>> started =
        NcclJob::start(bootstrap, *self->device_);
    if (!started.ok())
      return fail(started.error());
    if (othersFailed())
      return result;
    self->job_ = std::move(*started);
    self->group_ = &self->job_->group();
    self->transport_ = &self->job_->transport();
  }
  if (!session)
    self->launcher_ = {"WORLD_SIZE says",
                       "start one process per rank (WORLD_SIZE=N), N = "};
  result.rank = std::move(self);
  return result;
}

std::string NcclRank::deviceName() const { return device_->name(); }

RankRunResult NcclRank::run(const plan::Plan &plan, const RunOptions &options,
                            ProgressMeter *progress) {
  return runPlanOnDevice(plan, options, *group_, *device_, *transport_,
                         launcher_, progress);
}

} // namespace aoa::runtime
