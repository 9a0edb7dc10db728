//===- MpiSession.cpp -----------------------------------------------------===//
#include "MpiHandles.h"

#include <algorithm>

namespace aoa::runtime {

namespace {

/// Runs `call(offset, count)` over `total` elements in chunks MPI can count.
template <typename Call> void inChunks(size_t total, Call call) {
  for (size_t offset = 0; offset < total; offset += kMpiChunkElements)
    call(offset, int(std::min(kMpiChunkElements, total - offset)));
}

void allreduce(std::vector<uint64_t> &values, MPI_Op op, MPI_Comm comm) {
  inChunks(values.size(), [&](size_t offset, int count) {
    MPI_Allreduce(MPI_IN_PLACE, values.data() + offset, count, MPI_UINT64_T, op,
                  comm);
  });
}

} // namespace

bool MpiSession::available() { return true; }

MpiSession::MpiSession() : handles_(std::make_unique<Handles>()) {}

Expected<std::unique_ptr<MpiSession>> MpiSession::start() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    return Error{"MPI is already initialized in this process",
                 "this is a bug in aoa-run; please report it"};
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS)
    return Error{"MPI_Init_thread failed",
                 "start aoa-run with mpirun -np RANKS, and check the MPI "
                 "installation (mpirun --version)"};
  std::unique_ptr<MpiSession> session(new MpiSession());
  Handles &handles = *session->handles_;
  MPI_Comm_dup(MPI_COMM_WORLD, &handles.world);
  int rank = 0, size = 1;
  MPI_Comm_rank(handles.world, &rank);
  MPI_Comm_size(handles.world, &size);
  MPI_Comm_split_type(handles.world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                      &handles.host);
  int hostRank = 0, hostSize = 1;
  MPI_Comm_rank(handles.host, &hostRank);
  MPI_Comm_size(handles.host, &hostSize);
  session->setPlace(uint32_t(rank), uint32_t(size), uint32_t(hostRank),
                    uint32_t(hostSize));
  return session;
}

MpiSession::~MpiSession() {
  if (handles_->host != MPI_COMM_NULL)
    MPI_Comm_free(&handles_->host);
  if (handles_->world != MPI_COMM_NULL)
    MPI_Comm_free(&handles_->world);
  MPI_Finalize();
}

std::string MpiSession::broadcast(std::string text) const {
  uint64_t size = text.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, handles_->world);
  text.resize(size_t(size));
  inChunks(text.size(), [&](size_t offset, int count) {
    MPI_Bcast(text.data() + offset, count, MPI_CHAR, 0, handles_->world);
  });
  return text;
}

void MpiSession::sum(std::vector<uint64_t> &values) const {
  allreduce(values, MPI_SUM, handles_->world);
}

void MpiSession::sumOnHost(std::vector<uint64_t> &values) const {
  allreduce(values, MPI_SUM, handles_->host);
}

void MpiSession::max(std::vector<uint64_t> &values) const {
  allreduce(values, MPI_MAX, handles_->world);
}

void MpiSession::bitwiseOrOnRankZero(std::vector<uint64_t> &values) const {
  inChunks(values.size(), [&](size_t offset, int count) {
    MPI_Reduce(rank() == 0 ? MPI_IN_PLACE : values.data() + offset,
               rank() == 0 ? values.data() + offset : nullptr, count,
               MPI_UINT64_T, MPI_BOR, 0, handles_->world);
  });
}

void MpiSession::barrier() const { MPI_Barrier(handles_->world); }

} // namespace aoa::runtime
