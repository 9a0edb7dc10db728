//===- CastMismatch.cpp ---------------------------------------------------===//
#include "CastMismatch.h"

#include <cstdio>

namespace aoa {
namespace test {

std::string castMismatchText(DType from, DType to, uint64_t inputBits,
                             size_t element, uint64_t outputBits,
                             uint64_t expectedBits) {
  char text[200];
  std::snprintf(text, sizeof(text),
                "%s -> %s: input 0x%llx (element %zu) gives 0x%llx, the "
                "element conversion 0x%llx",
                std::string(dtypeName(from)).c_str(),
                std::string(dtypeName(to)).c_str(),
                (unsigned long long)inputBits, element,
                (unsigned long long)outputBits,
                (unsigned long long)expectedBits);
  return text;
}

} // namespace test
} // namespace aoa
