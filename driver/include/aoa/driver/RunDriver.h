//===- RunDriver.h - What aoa-run does with its parsed flags ----*- C++ -*-===//
//
// Reads and verifies a plan (codegen's reader, with located diagnostics),
// picks the backend, runs it with a progress meter, and reports. Only the
// `local` backend exists so far; the others are refused with a message
// rather than silently replaced.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_RUNDRIVER_H
#define AOA_DRIVER_RUNDRIVER_H

#include "aoa/runtime/RunOptions.h"

#include <iosfwd>
#include <string>

namespace aoa {

enum class ProgressStyle { Auto, Bar, Lines, None };

struct RunCommand {
  std::string planPath;
  std::string backend = "local";
  runtime::RunOptions options;
  ProgressStyle progress = ProgressStyle::Auto;
  bool color = false;
};

/// Runs the command; returns the process exit code (0 on success, 1 on any
/// error, which has then been reported on `err`).
int runPlanCommand(const RunCommand &command, std::ostream &err);

} // namespace aoa

#endif // AOA_DRIVER_RUNDRIVER_H
