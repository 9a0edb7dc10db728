//===- ErrorBudget.h - At most N errors of one kind -------------*- C++ -*-===//
#ifndef AOA_PASSES_LIB_ERRORBUDGET_H
#define AOA_PASSES_LIB_ERRORBUDGET_H

#include "aoa/ir/Diagnostics.h"

#include <string>

namespace aoa {

/// Stops a check from printing thousands of errors for one systematic
/// mistake (e.g. every layer of a model).
class ErrorBudget {
public:
  explicit ErrorBudget(DiagnosticEngine &diags, unsigned limit = 20)
      : diags_(diags), limit_(limit) {}
  bool allow() { return ++count_ <= limit_; }
  ~ErrorBudget() {
    if (count_ > limit_)
      diags_.error(SourceLocation{},
                   std::to_string(count_ - limit_) +
                       " more errors of the kinds above are not shown");
  }

private:
  DiagnosticEngine &diags_;
  unsigned limit_;
  unsigned count_ = 0;
};

} // namespace aoa

#endif // AOA_PASSES_LIB_ERRORBUDGET_H
