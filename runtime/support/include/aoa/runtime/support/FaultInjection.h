//===- FaultInjection.h - A test hook that fails one I/O call ---*- C++ -*-===//
//
// For testing the failure paths: the environment variable AOA_FAULT_INJECT,
// read once per process, makes the N-th read, write, fsync, rename or mpi
// message of this process fail as the operating system would (EIO), or kills
// the process there (SIGKILL), or counts them all (docs/testing.md):
//
//   AOA_FAULT_INJECT=write:3        the 3rd write fails with EIO
//   AOA_FAULT_INJECT=kill:fsync:2   SIGKILL just before the 2nd fsync
//   AOA_FAULT_INJECT=count          per-operation counts on stderr at exit
//
// The runtime's few I/O call sites ask injectedFault() just before the call;
// unset, it costs one load. The counters are the one piece of process-wide
// mutable state, atomic, and exist for this hook only.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SUPPORT_FAULTINJECTION_H
#define AOA_RUNTIME_SUPPORT_FAULTINJECTION_H

#include "aoa/runtime/support/Error.h"

#include <system_error>

namespace aoa::runtime {

/// The kinds of operation the hook counts. A read is one pread or read call;
/// a write one pwrite or write call; copy_file_range counts as a read and a
/// write; a message is one send or receive of the mpi backend.
enum class FaultPoint { Read, Write, Fsync, Rename, Message };

/// Checks the value of AOA_FAULT_INJECT: a value it does not understand is an
/// error, so that a mistyped test setting fails instead of testing nothing.
Status checkFaultInjectionSetting();

/// Counts one operation of kind `point`, about to be made. Returns true,
/// with errno set to EIO, when the hook fails this one; the caller then
/// takes its ordinary error path, as if the call had failed.
bool injectedFault(FaultPoint point);

/// The same, for calls that report through a std::error_code.
bool injectedFault(FaultPoint point, std::error_code &error);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SUPPORT_FAULTINJECTION_H
