//===- MpiHandles.h - The MPI objects of an MpiSession ----------*- C++ -*-===//
//
// Private to the runtime's mpi backend: the only place, with the files in
// this folder, that sees mpi.h.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_MPI_LIB_MPIHANDLES_H
#define AOA_RUNTIME_BACKENDS_MPI_LIB_MPIHANDLES_H

#include "aoa/runtime/backends/MpiBackend.h"

#include <mpi.h>

#include <climits>
#include <cstddef>

namespace aoa::runtime {

struct MpiSession::Handles {
  /// A duplicate of MPI_COMM_WORLD, so that nothing else shares its
  /// messages.
  MPI_Comm world = MPI_COMM_NULL;
  /// The processes of `world` on this host (MPI_COMM_TYPE_SHARED).
  MPI_Comm host = MPI_COMM_NULL;
};

/// The most elements one MPI call moves (counts are ints).
constexpr size_t kMpiChunkElements = size_t(1) << 30;

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_MPI_LIB_MPIHANDLES_H
