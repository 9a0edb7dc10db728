//===- JsonSupport.h - Small JSON documents with located errors -*- C++ -*-===//
//
// Configs and query files are small, so they are parsed with nlohmann's DOM;
// these helpers turn its errors into located diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_JSON_JSONSUPPORT_H
#define AOA_FORMATS_JSON_JSONSUPPORT_H

#include "aoa/ir/Diagnostics.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace aoa {

/// Parses buffer `buffer` as JSON (keys kept in file order); a syntax error
/// is reported at its position as "malformed JSON <what>: …" with `hint`.
std::optional<nlohmann::ordered_json>
parseJsonBuffer(const SourceManager &sources, uint32_t buffer,
                DiagnosticEngine &diags, const std::string &what,
                const std::string &hint);

/// Where `"key"` first appears in the buffer: a good enough place to point
/// at for a problem with that key's value.
SourceLocation locateKey(const SourceManager &sources, uint32_t buffer,
                         const std::string &key);

/// How a JSON value reads in a message: "a string", "a list", "an object",
/// "true", "false", "null" or "the number 8.5".
std::string describeJsonValue(const nlohmann::ordered_json &value);

} // namespace aoa

#endif // AOA_FORMATS_JSON_JSONSUPPORT_H
