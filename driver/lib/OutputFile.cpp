//===- OutputFile.cpp ------------------------------------------------------===//
#include "aoa/driver/OutputFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <ostream>
#include <unistd.h>

namespace aoa {

std::optional<std::string> writeOutput(const std::string &path,
                                       const std::string &contents,
                                       std::ostream &stdoutStream) {
  if (path == "-") {
    stdoutStream << contents;
    stdoutStream.flush();
    if (!stdoutStream)
      return std::string("cannot write to standard output");
    return std::nullopt;
  }
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                  0644);
  if (fd < 0)
    return "cannot create '" + temporary + "': " + std::strerror(errno);
  auto fail = [&](const char *what) {
    std::string message = std::string("cannot ") + what + " '" + temporary +
                          "': " + std::strerror(errno);
    ::close(fd);
    ::unlink(temporary.c_str());
    return message;
  };
  size_t written = 0;
  while (written < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return fail("write");
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0)
    return fail("fsync");
  if (::close(fd) != 0) {
    std::string message = "cannot close '" + temporary + "': " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return message;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string message = "cannot rename '" + temporary + "' to '" + path +
                          "': " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return message;
  }
  return std::nullopt;
}

} // namespace aoa
