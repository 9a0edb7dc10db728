//===- Cast.cpp -----------------------------------------------------------===//
#include "aoa/runtime/Cast.h"

#include "ElementOps.h"

#include <functional>
#include <string>

namespace aoa::runtime {

bool isCastSupported(DType from, DType to) {
  return from == to || (isFloatingDType(from) && isFloatingDType(to));
}

Status castElements(DType from, const void *src, DType to, void *dst,
                    size_t count) {
  std::string pair =
      std::string(dtypeName(from)) + " to " + std::string(dtypeName(to));
  if (!isCastSupported(from, to))
    return Error{"cannot cast " + pair +
                     ": casts are defined between floating dtypes (float64, "
                     "float32, float16, bfloat16) only",
                 "remove the cast, or cast between floating dtypes"};
  if (count == 0)
    return Status();
  auto *in = static_cast<const std::byte *>(src);
  auto *out = static_cast<std::byte *>(dst);
  size_t inBytes = count * dtypeSize(from);
  size_t outBytes = count * dtypeSize(to);
  // std::less gives a total order even on unrelated pointers.
  std::less<const std::byte *> before;
  bool overlap = before(in, out + outBytes) && before(out, in + inBytes);
  bool inPlace = in == out && inBytes == outBytes;
  if (overlap && !inPlace)
    return Error{"cannot cast " + pair +
                     ": the source and destination "
                     "arrays overlap",
                 "cast into a separate buffer"};
  withElementOp(from, to, [&](auto op) {
    using Op = decltype(op);
    if constexpr (Op::isCopy) {
      if (inPlace)
        return; // copying onto itself
    }
    convertRun<Op>(in, out, count);
  });
  return Status();
}

} // namespace aoa::runtime
