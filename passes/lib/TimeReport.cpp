//===- TimeReport.cpp - Wall time of named compile steps -----------------===//
#include "aoa/passes/TimeReport.h"

#include <cstdio>
#include <ostream>

#include <sys/resource.h>

namespace aoa {

namespace {

int64_t peakResidentBytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return int64_t(usage.ru_maxrss) * 1024; // Linux reports KiB
}

} // namespace

void TimeReport::add(std::string name, double seconds) {
  steps_.push_back({std::move(name), seconds, peakResidentBytes()});
}

void TimeReport::addSince(std::string name, Clock::time_point start) {
  add(std::move(name),
      std::chrono::duration<double>(Clock::now() - start).count());
}

void TimeReport::print(std::ostream &os) const {
  double total = 0;
  for (const Step &step : steps_)
    total += step.seconds;
  char line[200];
  os << "===" << std::string(73, '-') << "===\n"
     << "                         ... Pass execution timing report ...\n"
     << "===" << std::string(73, '-') << "===\n";
  std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds\n\n",
                total);
  os << line << "   ---Wall Time---  --Peak RSS--  --- Name ---\n";
  for (const Step &step : steps_) {
    std::snprintf(line, sizeof line, "   %.4f (%5.1f%%)  %8.1f MiB  %s\n",
                  step.seconds, total > 0 ? 100.0 * step.seconds / total : 0.0,
                  double(step.peakBytes) / (1 << 20), step.name.c_str());
    os << line;
  }
  std::snprintf(line, sizeof line, "   %.4f (100.0%%)  Total\n", total);
  os << line;
}

} // namespace aoa
