//===- CompileDriver.cpp ---------------------------------------------------===//
#include "aoa/driver/CompileDriver.h"

#include "aoa/driver/OutputFile.h"
#include "aoa/frontend/ConfigLoader.h"
#include "aoa/frontend/Parser.h"
#include "aoa/frontend/Printers.h"
#include "aoa/ir/Diagnostics.h"

#include <ostream>
#include <sstream>

namespace aoa {

namespace {

/// Emits the requested stage into `text`; false if a stage failed.
bool runStages(const CompileOptions &options, SourceManager &sources,
               DiagnosticEngine &diags, std::ostream &text) {
  std::optional<ConfigFile> config =
      loadConfigFile(options.configPath, sources, diags);
  if (!config)
    return false;
  if (options.reverse)
    config->reverse = true;

  if (options.emit == EmitKind::Tokens)
    return printTokens(text, *config, sources, diags);

  std::optional<Program> program = parseConfig(*config, sources, diags);
  if (!program)
    return false;
  printProgram(text, *program, sources);
  return true;
}

} // namespace

int runCompile(const CompileOptions &options, std::ostream &out,
               std::ostream &err) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  TextDiagnosticPrinter printer(err, sources, options.color);
  diags.setHandler(printer.handler());

  // Output is produced in memory and written only on success, so a failed
  // run never leaves a partial output file behind.
  std::ostringstream text;
  bool ok = runStages(options, sources, diags, text) && !diags.hadErrors();
  if (!ok) {
    err << diags.errorCount() << (diags.errorCount() == 1 ? " error" : " errors")
        << " generated.\n";
    return 1;
  }
  if (std::optional<std::string> failure =
          writeOutput(options.outputPath, text.str(), out)) {
    diags.error(SourceLocation{}, *failure);
    return 1;
  }
  return 0;
}

} // namespace aoa
