//===- OutputFile.cpp ------------------------------------------------------===//
#include "aoa/driver/OutputFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <ostream>
#include <unistd.h>

namespace aoa {

std::optional<OutputFile> OutputFile::open(const std::string &path,
                                           std::ostream &stdoutStream,
                                           std::string &error) {
  if (path == "-")
    return OutputFile(path, &stdoutStream);
  OutputFile out(path, nullptr);
  out.temporary_ = path + ".tmp." + std::to_string(::getpid());
  out.file_ = std::make_unique<std::ofstream>(
      out.temporary_, std::ios::binary | std::ios::trunc);
  if (!*out.file_) {
    error = "cannot create '" + out.temporary_ + "': " + std::strerror(errno);
    out.file_.reset();
    out.done_ = true;
    return std::nullopt;
  }
  return out;
}

OutputFile::OutputFile(OutputFile &&other) noexcept
    : path_(std::move(other.path_)), temporary_(std::move(other.temporary_)),
      stdout_(other.stdout_), memory_(std::move(other.memory_)),
      file_(std::move(other.file_)), done_(other.done_) {
  other.done_ = true;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (done_)
    return;
  done_ = true;
  if (file_) {
    file_->close();
    ::unlink(temporary_.c_str());
  }
}

std::ostream &OutputFile::stream() {
  if (file_)
    return *file_;
  return memory_;
}

std::optional<std::string> OutputFile::commit() {
  if (done_)
    return std::string("output already finished");
  if (stdout_) {
    done_ = true;
    std::string text = memory_.str();
    stdout_->write(text.data(), static_cast<std::streamsize>(text.size()));
    stdout_->flush();
    if (!*stdout_)
      return std::string("cannot write to standard output");
    return std::nullopt;
  }
  file_->flush();
  bool written = static_cast<bool>(*file_);
  int savedErrno = errno;
  file_->close();
  if (!written || file_->fail()) {
    discard();
    return "cannot write '" + temporary_ + "': " +
           std::strerror(savedErrno ? savedErrno : EIO);
  }
  // The stream hides its descriptor; fsync through a second one flushes the
  // same file.
  int fd = ::open(temporary_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    std::string message =
        "cannot fsync '" + temporary_ + "': " + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    discard();
    return message;
  }
  ::close(fd);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    std::string message = "cannot rename '" + temporary_ + "' to '" + path_ +
                          "': " + std::strerror(errno);
    discard();
    return message;
  }
  done_ = true;
  return std::nullopt;
}

std::optional<std::string> writeOutput(const std::string &path,
                                       const std::string &contents,
                                       std::ostream &stdoutStream) {
  std::string error;
  std::optional<OutputFile> out = OutputFile::open(path, stdoutStream, error);
  if (!out)
    return error;
  out->stream().write(contents.data(),
                      static_cast<std::streamsize>(contents.size()));
  return out->commit();
}

} // namespace aoa
