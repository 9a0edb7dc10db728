//===- FuzzConfig.cpp - Fuzz target: configs and statements ---------------===//
//
// The input is a config file as `aoa-compile CONFIG` reads it: Paddle's JSON
// or `.aoa` text (chosen by its first non-blank character, as for a path
// without either suffix). It is lexed (--emit=tokens), parsed and verified
// (--emit=ast, printed too).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "aoa/frontend/ConfigLoader.h"
#include "aoa/frontend/Parser.h"
#include "aoa/frontend/Printers.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  aoa::fuzz::RenderedDiagnostics r;
  std::optional<aoa::ConfigFile> config = aoa::loadConfigText(
      "fuzz-config", std::string(reinterpret_cast<const char *>(data), size),
      r.sources, r.diags);
  if (!config)
    return 0;
  std::ostringstream out;
  aoa::printTokens(out, *config, r.sources, r.diags);
  if (std::optional<aoa::Program> program =
          aoa::parseConfig(*config, r.sources, r.diags))
    aoa::printProgram(out, *program, r.sources);
  return 0;
}
