//===- ElementOps.h - Per-element copy and cast operations ------*- C++ -*-===//
//
// Private to the runtime library. An element operation says how one element
// of the source becomes one element of the destination: Op::Src and Op::Dst
// are the storage types, Op::apply converts, Op::isCopy marks a plain copy
// of the bits (which kernels turn into memcpy). Kernels are templates over
// the operation, so the conversion inlines into their loops; one dispatch
// per call (withElementOp) picks the instantiation, never one per element.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_ELEMENTOPS_H
#define AOA_RUNTIME_TRANSFORMS_LIB_ELEMENTOPS_H

#include "FastCast.h"
#include "aoa/ir/DType.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace aoa::runtime {

/// Unaligned loads and stores (buffers come from file offsets): the fast
/// casts' own (FastCastElements.h).
using fastcast::load;
using fastcast::store;

/// The bits of a `sizeof(Word)`-byte element, unchanged.
template <typename Word> struct CopyOp {
  using Src = Word;
  using Dst = Word;
  static constexpr bool isCopy = true;
  static constexpr bool kChecked = false;
  static Word apply(Word word) { return word; }
};

/// A cast between two different dtypes: the strided-copy kernels' element
/// conversion (StridedCopyElement.h), so the CPU and the GPU give the same
/// bits and refuse the same values.
template <DType From, DType To> struct CastOp {
  using Element = CastElement<From, To>;
  using Src = typename Element::Src;
  using Dst = typename Element::Dst;
  static constexpr DType kFrom = From;
  static constexpr DType kTo = To;
  static constexpr bool isCopy = false;
  static constexpr bool kChecked = Element::kChecked;

  static Dst apply(Src value) { return Element::convert(value); }
};

/// The element `value` converted, to be stored at destination offset
/// `offset` (in elements); for a checked cast, an element without a result
/// lowers `firstFailure` to `offset`. Unchecked operations are Op::apply.
template <typename Op>
inline typename Op::Dst applyAt(typename Op::Src value, int64_t offset,
                                uint64_t &firstFailure) {
  if constexpr (Op::kChecked) {
    bool ok = true;
    typename Op::Dst result = Op::Element::convertChecked(value, ok);
    if (!ok && uint64_t(offset) < firstFailure)
      firstFailure = uint64_t(offset);
    return result;
  } else {
    (void)offset;
    (void)firstFailure;
    return Op::apply(value);
  }
}

/// Whether an operation is a cast with a vector path (FastCast.h).
template <typename Op> constexpr bool hasFastCastOp() {
  if constexpr (Op::isCopy)
    return false;
  else
    return fastcast::hasFastCast(Op::kFrom, Op::kTo);
}

/// Converts a contiguous run of `count` elements whose first lands at
/// destination offset `offset` (see applyAt); `partOfLargeCopy`: the run
/// is one of a copy whose destination is large enough for streaming stores
/// (fastcast::castRun).
template <typename Op>
inline void convertRun(const std::byte *src, std::byte *dst, size_t count,
                       int64_t offset, uint64_t &firstFailure,
                       bool partOfLargeCopy = false) {
  using Src = typename Op::Src;
  using Dst = typename Op::Dst;
  if constexpr (Op::isCopy) {
    std::memcpy(dst, src, count * sizeof(Src));
  } else if constexpr (hasFastCastOp<Op>()) {
    uint64_t failure = fastcast::castRun<Op::kFrom, Op::kTo>(
        src, dst, count, partOfLargeCopy);
    if (failure != kNoCastFailure && uint64_t(offset) + failure < firstFailure)
      firstFailure = uint64_t(offset) + failure;
  } else if constexpr (Op::kChecked) {
    uint64_t failure = kNoCastFailure;
    for (size_t i = 0; i < count; ++i)
      store<Dst>(dst + i * sizeof(Dst),
                 applyAt<Op>(load<Src>(src + i * sizeof(Src)),
                             offset + int64_t(i), failure));
    if (failure < firstFailure)
      firstFailure = failure;
  } else {
    for (size_t i = 0; i < count; ++i)
      store<Dst>(dst + i * sizeof(Dst),
                 Op::apply(load<Src>(src + i * sizeof(Src))));
  }
}

/// Calls `body(Op())` with the operation that turns `from` elements into
/// `to` elements; false (and no call) when there is none.
template <typename Body> bool withElementOp(DType from, DType to, Body &&body) {
  if (from == to) {
    switch (dtypeSize(from)) {
    case 1:
      body(CopyOp<uint8_t>());
      return true;
    case 2:
      body(CopyOp<uint16_t>());
      return true;
    case 4:
      body(CopyOp<uint32_t>());
      return true;
    case 8:
      body(CopyOp<uint64_t>());
      return true;
    default:
      return false;
    }
  }
  return withCastDTypes(from, to, [&](auto fromTag, auto toTag) {
    body(CastOp<decltype(fromTag)::value, decltype(toTag)::value>());
  });
}

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_LIB_ELEMENTOPS_H
