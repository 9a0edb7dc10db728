//===- OutputFile.h - Atomic output files -----------------------*- C++ -*-===//
#ifndef AOA_DRIVER_OUTPUTFILE_H
#define AOA_DRIVER_OUTPUTFILE_H

#include <iosfwd>
#include <optional>
#include <string>

namespace aoa {

/// Writes `contents` to `path` atomically (a temporary file in the same
/// directory, fsync, rename), or to `stdoutStream` when path is "-".
/// Returns a message on failure; the destination is then left untouched.
std::optional<std::string> writeOutput(const std::string &path,
                                       const std::string &contents,
                                       std::ostream &stdoutStream);

} // namespace aoa

#endif // AOA_DRIVER_OUTPUTFILE_H
