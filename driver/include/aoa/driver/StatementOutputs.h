//===- StatementOutputs.h - What statements write from a source -*- C++ -*-===//
//
// The keys a config's statements write from a source checkpoint, with
// dtypes and shapes: the destination aoa-compile derives without --dst (the
// dataflow's leaves and their optimizer states, each whole). aoa-layout
// --config places them.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_STATEMENTOUTPUTS_H
#define AOA_DRIVER_STATEMENTOUTPUTS_H

#include "aoa/ir/AST.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/ShardMetadata.h"

#include <optional>
#include <string>

namespace aoa {

/// Runs the compiler up to derive-destination over the statements of
/// `configPath` (JSON or .aoa) and the source `source` (named
/// `sourcePath` in messages); returns the derived layout (every target
/// whole, rank 0, in the order --emit=mappings answers them), or nullopt
/// after reporting errors.
std::optional<ShardMetadata>
deriveStatementOutputs(const std::string &configPath,
                       const ShardMetadata &source,
                       const std::string &sourcePath, SourceManager &sources,
                       DiagnosticEngine &diags);

/// The same for statements already parsed (aoa-compile --layout parses
/// its config once more for this).
std::optional<ShardMetadata>
deriveStatementOutputs(Program program, const ShardMetadata &source,
                       const std::string &sourcePath, SourceManager &sources,
                       DiagnosticEngine &diags);

} // namespace aoa

#endif // AOA_DRIVER_STATEMENTOUTPUTS_H
