//===- Error.cpp ----------------------------------------------------------===//
#include "aoa/runtime/support/Error.h"

#include <cstring>

namespace aoa::runtime {

std::string Error::toString() const {
  if (hint.empty())
    return message;
  return message + "\nhint: " + hint;
}

std::string errnoText(int errnoValue) {
  char buffer[256];
  // The GNU strerror_r (g++ defines _GNU_SOURCE) returns the text, which may
  // or may not live in `buffer`.
  const char *text = strerror_r(errnoValue, buffer, sizeof(buffer));
  return text ? std::string(text) : "error " + std::to_string(errnoValue);
}

} // namespace aoa::runtime
