//===- ErrorLimit.h - At most N errors from reading a plan ------*- C++ -*-===//
#ifndef AOA_FORMATS_PLAN_LIB_ERRORLIMIT_H
#define AOA_FORMATS_PLAN_LIB_ERRORLIMIT_H

#include "aoa/ir/Diagnostics.h"

#include <string>

namespace aoa {

/// Forwards errors to an engine until `limit` have been reported, then says
/// once that it stopped: one systematic mistake in a million-line plan must
/// not print a million errors. The reader and the verifier share one.
class ErrorLimit {
public:
  explicit ErrorLimit(DiagnosticEngine &diags, unsigned limit = 20)
      : diags_(diags), discarded_(diags.sources()), limit_(limit) {}

  /// The error, or (once stopped) a diagnostic that goes nowhere, so callers
  /// can chain notes and hints either way.
  InFlightDiagnostic error(SourceLocation location, std::string message);

  /// True once the limit was reached: callers stop checking.
  bool stopped() const { return stopped_; }
  unsigned count() const { return count_; }

private:
  DiagnosticEngine &diags_;
  DiagnosticEngine discarded_;
  unsigned limit_;
  unsigned count_ = 0;
  bool stopped_ = false;
};

} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_ERRORLIMIT_H
