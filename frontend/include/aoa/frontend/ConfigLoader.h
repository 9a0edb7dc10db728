//===- ConfigLoader.h - Reading AOA configs from disk -----------*- C++ -*-===//
//
// Two config formats:
//   * Paddle's JSON: {"aoa_statements": [...], "aoa_config_reverse": false,
//     "enable_traceback": true}; each statement string becomes its own buffer
//     (named `aoa_statements[i]` in diagnostics);
//   * `.aoa` text: statements separated by newlines or `;`, `#` comments.
// A `.json` path is JSON, a `.aoa` path is text; any other path is JSON if
// its first non-blank character is `{`.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FRONTEND_CONFIGLOADER_H
#define AOA_FRONTEND_CONFIGLOADER_H

#include "aoa/ir/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace aoa {

struct ConfigFile {
  std::string path;
  bool isJson = false;
  /// The whole file, for diagnostics about the file itself.
  uint32_t fileBuffer = 0;
  /// Where the statements are: one buffer per JSON statement string, or the
  /// whole file for `.aoa`.
  std::vector<uint32_t> statementBuffers;
  bool reverse = false;
  bool enableTraceback = true;
};

/// Reads and validates a config file; reports problems (unreadable file,
/// malformed JSON, unknown keys, wrong value types) and returns nullopt.
std::optional<ConfigFile> loadConfigFile(const std::string &path,
                                         SourceManager &sources,
                                         DiagnosticEngine &diags);

/// As loadConfigFile, for text already in memory (tests, stdin).
std::optional<ConfigFile> loadConfigText(const std::string &path,
                                         std::string text,
                                         SourceManager &sources,
                                         DiagnosticEngine &diags);

} // namespace aoa

#endif // AOA_FRONTEND_CONFIGLOADER_H
