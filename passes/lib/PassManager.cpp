//===- PassManager.cpp -----------------------------------------------------===//
#include "aoa/passes/Pass.h"

#include "aoa/passes/CompilationState.h"

#include <chrono>
#include <cstdio>
#include <ostream>

namespace aoa {

bool PassManager::run(CompilationState &state,
                      const PassInstrumentation &instrumentation,
                      std::ostream &printStream, std::ostream &timeStream) {
  using Clock = std::chrono::steady_clock;
  struct Timing {
    const char *name;
    double seconds;
  };
  std::vector<Timing> timings;
  bool ok = true;
  Clock::time_point total = Clock::now();
  for (const std::unique_ptr<Pass> &pass : passes_) {
    Clock::time_point start = Clock::now();
    unsigned errorsBefore = state.diags.errorCount();
    bool passOk = pass->run(state) && state.diags.errorCount() == errorsBefore;
    timings.push_back(
        {pass->name(),
         std::chrono::duration<double>(Clock::now() - start).count()});
    if (!passOk) {
      ok = false;
      break;
    }
    if (instrumentation.printAfterAll ||
        instrumentation.printAfter.count(pass->name())) {
      printStream << "// -----// IR Dump After " << pass->name() << " //----- //\n";
      pass->print(state, printStream);
    }
  }
  if (instrumentation.timePasses) {
    double totalSeconds =
        std::chrono::duration<double>(Clock::now() - total).count();
    char line[160];
    timeStream << "===" << std::string(73, '-') << "===\n"
               << "                         ... Pass execution timing report ...\n"
               << "===" << std::string(73, '-') << "===\n";
    std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds\n\n",
                  totalSeconds);
    timeStream << line << "   ---Wall Time---  --- Name ---\n";
    for (const Timing &t : timings) {
      std::snprintf(line, sizeof line, "   %.4f (%5.1f%%)  %s\n", t.seconds,
                    totalSeconds > 0 ? 100.0 * t.seconds / totalSeconds : 0.0,
                    t.name);
      timeStream << line;
    }
    std::snprintf(line, sizeof line, "   %.4f (100.0%%)  Total\n", totalSeconds);
    timeStream << line;
  }
  return ok;
}

} // namespace aoa
