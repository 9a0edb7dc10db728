//===- FuzzSupport.h - What every fuzz target shares ------------*- C++ -*-===//
//
// Each target feeds one input to a loader exactly as the tools do, with the
// diagnostics rendered as the tools print them (into a string, so the
// location and caret code runs too). Errors are fine; only a crash, a
// sanitizer report, a leak, a timeout or running out of memory fails.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_FUZZ_FUZZSUPPORT_H
#define AOA_TEST_FUZZ_FUZZSUPPORT_H

#include "aoa/ir/Diagnostics.h"

#include <sstream>

namespace aoa::fuzz {

/// A source manager and a diagnostic engine whose diagnostics are printed,
/// as the tools print them, into a string that is then dropped.
struct RenderedDiagnostics {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  std::ostringstream text;
  TextDiagnosticPrinter printer{text, sources};

  RenderedDiagnostics() { diags.setHandler(printer.handler()); }
};

} // namespace aoa::fuzz

#endif // AOA_TEST_FUZZ_FUZZSUPPORT_H
