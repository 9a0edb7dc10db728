//===- OutputFile.h - Atomic output files -----------------------*- C++ -*-===//
//
// Outputs appear whole or not at all: text goes to a temporary file in the
// destination's directory, and only commit() makes it the output (fsync,
// rename). Output to standard output ("-") is held in memory until commit, so
// a failed run prints nothing there either, up to 64 MiB: beyond that it
// streams (a failure then leaves printed text, and the exit code says so).
// A path that exists and is neither a regular file nor a directory (a device
// such as /dev/null, a FIFO) is written in place: there is nothing to
// replace atomically, and a rename would replace the device itself.
// A temporary starts going to disk as it is written (every 16 MiB), so that
// the fsync of commit() waits for the last part only.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_OUTPUTFILE_H
#define AOA_DRIVER_OUTPUTFILE_H

#include <fstream>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace aoa {

class OutputFile {
public:
  /// Opens the temporary for `path` ("-" is `stdoutStream`); on failure
  /// returns nullopt and sets `error`.
  static std::optional<OutputFile> open(const std::string &path,
                                        std::ostream &stdoutStream,
                                        std::string &error);
  OutputFile(OutputFile &&other) noexcept;
  OutputFile &operator=(OutputFile &&) = delete;
  OutputFile(const OutputFile &) = delete;
  /// Removes the temporary unless committed.
  ~OutputFile();

  std::ostream &stream();
  /// Makes the output visible; returns a message on failure (the
  /// destination is then left untouched).
  std::optional<std::string> commit();

private:
  OutputFile(std::string path, std::ostream *stdoutStream)
      : path_(std::move(path)), stdout_(stdoutStream) {}
  void discard();

  std::string path_;
  std::string temporary_;
  std::ostream *stdout_ = nullptr;
  /// Holds standard output until commit or until it grows too large.
  std::unique_ptr<std::streambuf> spill_;
  std::unique_ptr<std::ostream> spillStream_;
  /// The file written (the temporary, or the path in place) and its stream.
  std::unique_ptr<std::filebuf> fileBuffer_;
  std::unique_ptr<std::ostream> file_;
  /// Writing `path_` itself (a device or a pipe), not a temporary.
  bool inPlace_ = false;
  bool done_ = false;
};

/// Writes `contents` to `path` atomically, or to `stdoutStream` when path is
/// "-". Returns a message on failure; the destination is then untouched.
std::optional<std::string> writeOutput(const std::string &path,
                                       const std::string &contents,
                                       std::ostream &stdoutStream);

} // namespace aoa

#endif // AOA_DRIVER_OUTPUTFILE_H
