//===- TimeReport.h - Wall time of named compile steps ----------*- C++ -*-===//
//
// `--time-passes` shows where a compile spends its time: every pass by its
// name, and the driver's own steps around the pipeline (loading the metadata,
// verifying, writing and summarizing the plan, releasing the state) in
// brackets, so that the table adds up to the whole compile. Beside each
// step, the process's peak resident memory when the step ended shows which
// step raised it.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_TIMEREPORT_H
#define AOA_PASSES_TIMEREPORT_H

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace aoa {

class TimeReport {
public:
  using Clock = std::chrono::steady_clock;

  /// Records `seconds` under `name`, after the steps recorded before it,
  /// with the process's peak RSS so far.
  void add(std::string name, double seconds);
  /// Records the time from `start` to now under `name`.
  void addSince(std::string name, Clock::time_point start);

  /// The LLVM-style table: one line per step with its share and the peak
  /// RSS after it, then the total.
  void print(std::ostream &os) const;

private:
  struct Step {
    std::string name;
    double seconds;
    int64_t peakBytes;
  };
  std::vector<Step> steps_;
};

/// Adds the time from its construction to its destruction to a report
/// (nothing when the report is null).
class ScopedTimeStep {
public:
  ScopedTimeStep(TimeReport *report, std::string name)
      : report_(report), name_(std::move(name)),
        start_(TimeReport::Clock::now()) {}
  ~ScopedTimeStep() {
    if (report_)
      report_->addSince(std::move(name_), start_);
  }
  /// Starts the step's time again from now.
  void restart() { start_ = TimeReport::Clock::now(); }
  ScopedTimeStep(const ScopedTimeStep &) = delete;
  ScopedTimeStep &operator=(const ScopedTimeStep &) = delete;

private:
  TimeReport *report_;
  std::string name_;
  TimeReport::Clock::time_point start_;
};

} // namespace aoa

#endif // AOA_PASSES_TIMEREPORT_H
