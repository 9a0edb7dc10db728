//===- FileText.h - A whole file as text ------------------------*- C++ -*-===//
//
// Configs, layout specs and query files are read whole before they are
// parsed, so that diagnostics can quote their lines.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_FILETEXT_H
#define AOA_IR_FILETEXT_H

#include <optional>
#include <string>

namespace aoa {

/// Reads a whole file into `out`; on failure returns the system's reason.
std::optional<std::string> readFileToString(const std::string &path,
                                            std::string &out);

} // namespace aoa

#endif // AOA_IR_FILETEXT_H
