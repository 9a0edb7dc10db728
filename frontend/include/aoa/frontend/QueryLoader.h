//===- QueryLoader.h - Targets for --emit=mappings --------------*- C++ -*-===//
//
// `aoa-compile --queries FILE` answers the targets of FILE instead of every
// destination shard:
//
//   {"queries": [{"key": "d1", "global_offset": [0, 0], "local_shape": [4, 1],
//                 "global_shape": [4, 1], "dtype": "float64"}, ...]}
//
// Each target is Paddle's ShardedWeightDesc; every field is required and
// checked (types, equal ranks, the box inside the global shape, the dtype).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FRONTEND_QUERYLOADER_H
#define AOA_FRONTEND_QUERYLOADER_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/Mapping.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace aoa {

/// Where query `index` of a loaded file is written (its opening brace), for
/// diagnostics about it later. It reads the file's text in `sources`, which
/// must outlive it, and finds positions only when first asked: a query file
/// of a large model holds hundreds of thousands of queries.
using QueryLocator = std::function<SourceLocation(size_t index)>;

/// Reads and checks the query file; `locate`, when given, receives a
/// locator of its queries.
std::optional<std::vector<TensorDesc>>
loadQueries(const std::string &path, SourceManager &sources,
            DiagnosticEngine &diags, QueryLocator *locate = nullptr);

/// As loadQueries, for text already in memory.
std::optional<std::vector<TensorDesc>>
loadQueriesText(const std::string &path, std::string text,
                SourceManager &sources, DiagnosticEngine &diags,
                QueryLocator *locate = nullptr);

} // namespace aoa

#endif // AOA_FRONTEND_QUERYLOADER_H
