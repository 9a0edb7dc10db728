//===- CapturedDiagnostics.h - Diagnostics kept for assertions --*- C++ -*-===//
//
// Loader and reader tests run one input through a DiagnosticEngine whose
// handler keeps every diagnostic, then ask where, what and which hints.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_CAPTUREDDIAGNOSTICS_H
#define AOA_TEST_UNIT_CAPTUREDDIAGNOSTICS_H

#include "aoa/ir/Diagnostics.h"

#include <string>
#include <vector>

namespace aoa::test {

struct CapturedDiagnostics {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  std::vector<Diagnostic> diagnostics;

  CapturedDiagnostics() {
    diags.setHandler([this](const Diagnostic &d) { diagnostics.push_back(d); });
  }
  CapturedDiagnostics(const CapturedDiagnostics &) = delete;
  CapturedDiagnostics &operator=(const CapturedDiagnostics &) = delete;

  /// `file:line:col` of diagnostic `i`.
  std::string where(size_t i = 0) const {
    return sources.describe(diagnostics.at(i).location);
  }
  std::string message(size_t i = 0) const { return diagnostics.at(i).message; }
  /// Its hints, one a line.
  std::string hints(size_t i = 0) const {
    std::string out;
    for (const std::string &h : diagnostics.at(i).hints)
      out += h + "\n";
    return out;
  }
  /// Every diagnostic as the tools print it.
  std::string all() const {
    std::string out;
    for (const Diagnostic &d : diagnostics)
      out += renderDiagnostic(d, sources);
    return out;
  }
};

} // namespace aoa::test

#endif // AOA_TEST_UNIT_CAPTUREDDIAGNOSTICS_H
