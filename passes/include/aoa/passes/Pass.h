//===- Pass.h - Named compiler passes and the pass manager ------*- C++ -*-===//
//
// Every stage of aoa-compile is a Pass with a stable name, so that
// `--print-after=NAME`, `--print-after-all` and `--time-passes` can show it.
// Passes transform one CompilationState in order and report problems as
// diagnostics; the pipeline stops after the first pass that reports errors.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_PASS_H
#define AOA_PASSES_PASS_H

#include <functional>
#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace aoa {

struct CompilationState;
class TimeReport;

class Pass {
public:
  virtual ~Pass() = default;
  /// The name used by --print-after and --time-passes, e.g. `expand-ids`.
  virtual const char *name() const = 0;
  virtual const char *description() const = 0;
  /// Runs the pass; returns false if it reported errors.
  virtual bool run(CompilationState &state) = 0;
  /// Prints the part of the state this pass produced (--print-after).
  virtual void print(const CompilationState &state, std::ostream &os) const = 0;
};

struct PassInstrumentation {
  std::set<std::string> printAfter;
  bool printAfterAll = false;
  /// Where each pass's wall time goes (--time-passes); none when null.
  TimeReport *timeReport = nullptr;
  /// Called after each pass that succeeded (and its dump), e.g. for the
  /// driver to release what the later passes no longer read.
  std::function<void(const Pass &pass)> afterPass;
};

class PassManager {
public:
  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }

  /// Runs every pass in order; prints after the requested passes to
  /// `printStream` and records their times in the instrumentation's report.
  /// Returns false as soon as a pass fails.
  bool run(CompilationState &state, const PassInstrumentation &instrumentation,
           std::ostream &printStream);

  const std::vector<std::unique_ptr<Pass>> &passes() const { return passes_; }

private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

/// The names of every pass aoa-compile can run, in pipeline order.
std::vector<std::string> allPassNames();

} // namespace aoa

#endif // AOA_PASSES_PASS_H
