//===- PassManager.cpp -----------------------------------------------------===//
#include "aoa/passes/Pass.h"

#include "aoa/passes/CompilationState.h"
#include "aoa/passes/TimeReport.h"

#include <ostream>

namespace aoa {

bool PassManager::run(CompilationState &state,
                      const PassInstrumentation &instrumentation,
                      std::ostream &printStream) {
  for (const std::unique_ptr<Pass> &pass : passes_) {
    unsigned errorsBefore = state.diags.errorCount();
    bool passOk;
    {
      ScopedTimeStep timer(instrumentation.timeReport, pass->name());
      passOk = pass->run(state) && state.diags.errorCount() == errorsBefore;
    }
    if (!passOk)
      return false;
    if (instrumentation.printAfterAll ||
        instrumentation.printAfter.count(pass->name())) {
      printStream << "// -----// IR Dump After " << pass->name()
                  << " //----- //\n";
      pass->print(state, printStream);
    }
    if (instrumentation.afterPass)
      instrumentation.afterPass(*pass);
  }
  return true;
}

} // namespace aoa
