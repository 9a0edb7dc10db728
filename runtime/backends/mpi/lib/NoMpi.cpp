//===- NoMpi.cpp - The mpi backend of a build without MPI -----------------===//
//
// Compiled instead of MpiSession.cpp, MpiExecutor.cpp and MpiExchange.cpp
// when AOA_ENABLE_MPI is OFF: the API exists, and starting a session says
// why it cannot.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/backends/MpiBackend.h"

namespace aoa::runtime {

namespace {

Error noMpiBackend() {
  return Error{"this build has no MPI backend (aoa was configured without "
               "MPI)",
               "install MPI (Debian: openmpi-bin libopenmpi-dev, see "
               "scripts/setup-debian.sh) and rebuild with -DAOA_ENABLE_MPI=ON, "
               "or run the plan on one machine with --backend=local"};
}

} // namespace

struct MpiSession::Handles {};

bool MpiSession::available() { return false; }

MpiSession::MpiSession() : handles_(std::make_unique<Handles>()) {}
MpiSession::~MpiSession() = default;

Expected<std::unique_ptr<MpiSession>> MpiSession::start() {
  return noMpiBackend();
}

// A session never starts, so the collectives are never called; as a world
// of one process they would be identities.
std::string MpiSession::broadcast(std::string text) const { return text; }
void MpiSession::sum(std::vector<uint64_t> &) const {}
void MpiSession::sumOnHost(std::vector<uint64_t> &) const {}
void MpiSession::max(std::vector<uint64_t> &) const {}
void MpiSession::bitwiseOrOnRankZero(std::vector<uint64_t> &) const {}
void MpiSession::barrier() const {}

RankRunResult runPlanWithMpi(const plan::Plan &, const RunOptions &,
                             const MpiSession &, ProgressMeter *) {
  return RankRunResult::failure(noMpiBackend(), 0);
}

Status exchangeWithMpi(const MpiSession &, const RankRound &,
                       llvm::function_ref<uint8_t *(uint32_t)>, uint64_t &) {
  return noMpiBackend();
}

} // namespace aoa::runtime
