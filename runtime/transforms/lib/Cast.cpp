//===- Cast.cpp -----------------------------------------------------------===//
#include "aoa/runtime/transforms/Cast.h"

#include "ElementOps.h"

#include <functional>
#include <string>

namespace aoa::runtime {

bool isCastSupported(DType from, DType to) {
  return from == to || (isCastableDType(from) && isCastableDType(to));
}

Error castUnsupportedError(DType from, DType to) {
  DType opaque = isCastableDType(from) ? to : from;
  return Error{"cannot cast " + std::string(dtypeName(from)) + " to " +
                   std::string(dtypeName(to)) + ": " +
                   std::string(dtypeName(opaque)) +
                   " is only moved, never cast",
               "float8_e4m3fnuz, float8_e5m2fnuz and complex64 are copied "
               "unchanged; cast them with another tool, or keep their "
               "dtype"};
}

bool castMayFail(DType from, DType to) { return isCheckedCast(from, to); }

Error castFailureError(DType from, DType to, const std::string &element) {
  std::string target(dtypeName(to));
  std::string why = isFloatingDType(from)
                        ? " is NaN, infinite or outside " + target + "'s range"
                        : " does not fit " + target;
  return Error{"cannot cast " + std::string(dtypeName(from)) + " to " + target +
                   ": " + element + why,
               "fix the source data, or cast to a dtype that holds it; casts "
               "never wrap or saturate"};
}

Status castElements(DType from, const void *src, DType to, void *dst,
                    size_t count) {
  std::string pair =
      std::string(dtypeName(from)) + " to " + std::string(dtypeName(to));
  if (!isCastSupported(from, to))
    return castUnsupportedError(from, to);
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
  uint64_t firstFailure = kNoCastFailure;
  withElementOp(from, to, [&](auto op) {
    using Op = decltype(op);
    if constexpr (Op::isCopy) {
      if (inPlace)
        return; // copying onto itself
    }
    convertRun<Op>(in, out, count, 0, firstFailure);
  });
  if (firstFailure != kNoCastFailure)
    return castFailureError(from, to,
                            "element " + std::to_string(firstFailure));
  return Status();
}

} // namespace aoa::runtime
