//===- CastMismatch.h - The first element a cast got wrong ------*- C++ -*-===//
//
// The cast tests compare a kernel's output, bit for bit, with the scalar
// element conversion (CastElement::convert); this names the first element
// that differs.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_RUNTIME_TRANSFORMS_SUPPORT_CASTMISMATCH_H
#define AOA_TEST_UNIT_RUNTIME_TRANSFORMS_SUPPORT_CASTMISMATCH_H

#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace aoa {
namespace test {

/// "float16 -> bfloat16: input 0x... (element I) gives 0x..., the element
/// conversion 0x...".
std::string castMismatchText(DType from, DType to, uint64_t inputBits,
                             size_t element, uint64_t outputBits,
                             uint64_t expectedBits);

/// The first of `count` results at `out` that differs from the element
/// conversion of the source at `in`, as castMismatchText; empty when all
/// agree.
template <DType From, DType To>
std::string firstCastMismatch(const unsigned char *in, const unsigned char *out,
                              size_t count) {
  using Src = typename runtime::ElementStorage<From>::type;
  using Dst = typename runtime::ElementStorage<To>::type;
  for (size_t i = 0; i < count; ++i) {
    Src value;
    std::memcpy(&value, in + i * sizeof(Src), sizeof(Src));
    Dst expected = runtime::CastElement<From, To>::convert(value);
    if (std::memcmp(&expected, out + i * sizeof(Dst), sizeof(Dst)) != 0) {
      uint64_t inBits = 0, outBits = 0, expectedBits = 0;
      std::memcpy(&inBits, &value, sizeof(Src));
      std::memcpy(&outBits, out + i * sizeof(Dst), sizeof(Dst));
      std::memcpy(&expectedBits, &expected, sizeof(Dst));
      return castMismatchText(From, To, inBits, i, outBits, expectedBits);
    }
  }
  return "";
}

} // namespace test
} // namespace aoa

#endif // AOA_TEST_UNIT_RUNTIME_TRANSFORMS_SUPPORT_CASTMISMATCH_H
