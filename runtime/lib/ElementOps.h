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
#ifndef AOA_RUNTIME_LIB_ELEMENTOPS_H
#define AOA_RUNTIME_LIB_ELEMENTOPS_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/FloatConversion.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace aoa::runtime {

/// How a floating dtype's elements are held in memory.
template <DType D> struct FloatStorage;
template <> struct FloatStorage<DType::F64> { using type = double; };
template <> struct FloatStorage<DType::F32> { using type = float; };
template <> struct FloatStorage<DType::F16> { using type = uint16_t; };
template <> struct FloatStorage<DType::BF16> { using type = uint16_t; };
template <DType D> using FloatStorageT = typename FloatStorage<D>::type;

/// Unaligned loads and stores (buffers come from file offsets); compilers
/// emit plain moves for these.
template <typename T> inline T loadElement(const std::byte *at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}
template <typename T> inline void storeElement(std::byte *at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

/// The bits of a `sizeof(Word)`-byte element, unchanged.
template <typename Word> struct CopyOp {
  using Src = Word;
  using Dst = Word;
  static constexpr bool isCopy = true;
  static Word apply(Word word) { return word; }
};

/// A floating element converted from `From` to `To`. Every value of a
/// narrower type is exactly a float, so only a double source needs its own
/// rounding path.
template <DType From, DType To> struct CastOp {
  using Src = FloatStorageT<From>;
  using Dst = FloatStorageT<To>;
  static constexpr bool isCopy = false;

  static Dst apply(Src value) {
    if constexpr (From == DType::F64)
      return narrow(value);
    else
      return narrow(toFloat(value));
  }

private:
  static float toFloat(Src value) {
    if constexpr (From == DType::F16)
      return halfToFloat(value);
    else if constexpr (From == DType::BF16)
      return bfloat16ToFloat(value);
    else
      return value;
  }
  /// From float or double: one rounding into `To`.
  template <typename Wide> static Dst narrow(Wide value) {
    constexpr bool fromDouble = std::is_same_v<Wide, double>;
    if constexpr (To == DType::F16)
      return fromDouble ? doubleToHalf(value) : floatToHalf(value);
    else if constexpr (To == DType::BF16)
      return fromDouble ? doubleToBFloat16(value) : floatToBFloat16(value);
    else
      return static_cast<Dst>(value);
  }
};

/// Converts a contiguous run of `count` elements.
template <typename Op>
inline void convertRun(const std::byte *src, std::byte *dst, size_t count) {
  using Src = typename Op::Src;
  using Dst = typename Op::Dst;
  if constexpr (Op::isCopy) {
    std::memcpy(dst, src, count * sizeof(Src));
  } else {
    for (size_t i = 0; i < count; ++i)
      storeElement<Dst>(dst + i * sizeof(Dst),
                        Op::apply(loadElement<Src>(src + i * sizeof(Src))));
  }
}

/// Calls `body(FloatTag)` where FloatTag::value is `dtype` as a compile-time
/// constant; false when `dtype` is not floating.
template <typename Body> bool withFloatDType(DType dtype, Body &&body) {
  switch (dtype) {
  case DType::F64:
    body(std::integral_constant<DType, DType::F64>());
    return true;
  case DType::F32:
    body(std::integral_constant<DType, DType::F32>());
    return true;
  case DType::F16:
    body(std::integral_constant<DType, DType::F16>());
    return true;
  case DType::BF16:
    body(std::integral_constant<DType, DType::BF16>());
    return true;
  default:
    return false;
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
  if (!isFloatingDType(from) || !isFloatingDType(to))
    return false;
  return withFloatDType(from, [&](auto fromTag) {
    withFloatDType(to, [&](auto toTag) {
      body(CastOp<decltype(fromTag)::value, decltype(toTag)::value>());
    });
  });
}

} // namespace aoa::runtime

#endif // AOA_RUNTIME_LIB_ELEMENTOPS_H
