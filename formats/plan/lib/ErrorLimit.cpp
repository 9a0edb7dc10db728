//===- ErrorLimit.cpp -----------------------------------------------------===//
#include "ErrorLimit.h"

namespace aoa {

InFlightDiagnostic ErrorLimit::error(SourceLocation location,
                                     std::string message) {
  if (stopped_)
    return discarded_.error(location, std::move(message));
  if (count_ == limit_) {
    stopped_ = true;
    diags_
        .error(location, "too many errors in the plan; stopped after " +
                             std::to_string(limit_))
        .hint("fix the errors above and read the plan again");
    return discarded_.error(location, std::move(message));
  }
  ++count_;
  return diags_.error(location, std::move(message));
}

} // namespace aoa
