//===- Rendezvous.h - Sharing a secret through a shared directory -*- C++ -*-===//
//
// An nccl job started without mpirun (each process told its RANK and the
// WORLD_SIZE, e.g. by torchrun or a scheduler) needs rank 0's NCCL unique
// ids on every rank before any communicator exists. Rank 0 publishes them
// as a file in a directory every rank sees (written to a temporary name and
// renamed, so a reader sees all of it or nothing); the others wait for it.
// Once every rank has joined, rank 0 removes it, so that the directory can
// serve the next job. A file left by a crashed job is refused by rank 0
// rather than handed to the ranks of another job.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_BACKENDS_NCCL_LIB_RENDEZVOUS_H
#define AOA_RUNTIME_BACKENDS_NCCL_LIB_RENDEZVOUS_H

#include "aoa/runtime/support/Error.h"

#include <chrono>
#include <string>

namespace aoa::runtime {

/// The file in `directory` that carries the ids.
std::string rendezvousFilePath(const std::string &directory);

/// Rank 0: writes `secret` for the other ranks. Fails when the directory
/// does not exist or already holds a rendezvous file.
Status publishRendezvous(const std::string &directory,
                         const std::string &secret);

/// The other ranks: waits (polling) until the file exists and returns its
/// `size` bytes; fails after `timeout`, or when the file has another size.
Expected<std::string> awaitRendezvous(const std::string &directory, size_t size,
                                      std::chrono::milliseconds timeout);

/// Rank 0, once every rank has the secret: removes the file.
Status removeRendezvous(const std::string &directory);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_BACKENDS_NCCL_LIB_RENDEZVOUS_H
