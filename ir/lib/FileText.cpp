//===- FileText.cpp -------------------------------------------------------===//
#include "aoa/ir/FileText.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace aoa {

std::optional<std::string> readFileToString(const std::string &path,
                                            std::string &out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return std::string(std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return std::string("is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::string(std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    return std::string("read error");
  out = buffer.str();
  return std::nullopt;
}

} // namespace aoa
