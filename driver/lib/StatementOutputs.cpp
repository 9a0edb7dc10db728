//===- StatementOutputs.cpp -----------------------------------------------===//
#include "aoa/driver/StatementOutputs.h"

#include "aoa/frontend/ConfigLoader.h"
#include "aoa/frontend/Parser.h"
#include "aoa/passes/CompilationState.h"
#include "aoa/passes/Passes.h"

#include <sstream>

namespace aoa {

std::optional<ShardMetadata>
deriveStatementOutputs(const std::string &configPath,
                       const ShardMetadata &source,
                       const std::string &sourcePath, SourceManager &sources,
                       DiagnosticEngine &diags) {
  std::optional<ConfigFile> config = loadConfigFile(configPath, sources, diags);
  if (!config)
    return std::nullopt;
  // As aoa-compile with metadata: no statements is a pure re-layout.
  std::optional<Program> program =
      parseConfig(*config, sources, diags, /*allowEmpty=*/true);
  if (!program)
    return std::nullopt;
  return deriveStatementOutputs(std::move(*program), source, sourcePath,
                                sources, diags);
}

std::optional<ShardMetadata>
deriveStatementOutputs(Program program, const ShardMetadata &source,
                       const std::string &sourcePath, SourceManager &sources,
                       DiagnosticEngine &diags) {
  CompilationState state(sources, diags);
  state.program = std::move(program);
  state.source = KeySpace(source, "source", sourcePath);
  PassManager pm;
  addPipeline(pm, PipelineStage::DerivedDestination);
  // No pass dumps are asked for, so nothing is printed.
  std::ostringstream unused;
  if (!pm.run(state, PassInstrumentation{}, unused) ||
      !state.derivedDestination)
    return std::nullopt;
  return std::move(*state.derivedDestination);
}

} // namespace aoa
