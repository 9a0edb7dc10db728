//===- StridedCopyElement.h - One element of a strided copy -----*- C++ -*-===//
// Over 500 lines: host-and-device code that CUDA sources include whole (no
// separate .cpp can hold templates a kernel instantiates).
//
// Shared by the CPU copies and the CUDA kernels
// (runtime/backends/nccl/lib/cuda); included by C++ and by CUDA sources. How
// one element of a StridedCopy's source becomes one element of its
// destination, as host and device code at once (HostDevice.h): the CUDA
// kernels and the emulated device run exactly this, so the GPU gives the bits
// the CPU gives.
//
// An element operation has storage types Src and Dst and a static convert().
// CopyElement moves a word unchanged (a same-dtype copy; contiguous runs are
// moved as wider words, up to 16 bytes); CastElement converts between any
// two dtypes as numpy's astype (floats with FloatConversion.h, rounding
// once); the CPU's copies (ElementOps.h) cast with it too. A cast that can
// meet a value without a result (a float or a wider integer to an integer)
// is "checked": it reports such elements, and the copy records the
// smallest destination offset among them in a cast-failure word. Kernels are
// templates over the operation: the dtype pair is picked once per copy
// (withStridedCopyElement), never per element.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_STRIDEDCOPYELEMENT_H
#define AOA_RUNTIME_TRANSFORMS_STRIDEDCOPYELEMENT_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/Float8Conversion.h"
#include "aoa/runtime/transforms/FloatConversion.h"
#include "aoa/runtime/transforms/HostDevice.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace aoa::runtime {

/// 16 bytes moved as one load and one store on the GPU.
struct alignas(16) Word16 {
  uint64_t low;
  uint64_t high;
};

/// How a castable dtype's elements are held in memory (float16, bfloat16
/// and the FP8 formats as their bits; bool as one byte, 0 or 1, any other
/// byte read as true). The opaque dtypes (float8_e4m3fnuz, float8_e5m2fnuz,
/// complex64) have none: they are only copied.
template <DType D> struct ElementStorage;
template <> struct ElementStorage<DType::F64> { using type = double; };
template <> struct ElementStorage<DType::F32> { using type = float; };
template <> struct ElementStorage<DType::F16> { using type = uint16_t; };
template <> struct ElementStorage<DType::BF16> { using type = uint16_t; };
template <> struct ElementStorage<DType::I64> { using type = int64_t; };
template <> struct ElementStorage<DType::I32> { using type = int32_t; };
template <> struct ElementStorage<DType::I16> { using type = int16_t; };
template <> struct ElementStorage<DType::I8> { using type = int8_t; };
template <> struct ElementStorage<DType::U8> { using type = uint8_t; };
template <> struct ElementStorage<DType::Bool> { using type = uint8_t; };
template <> struct ElementStorage<DType::U64> { using type = uint64_t; };
template <> struct ElementStorage<DType::U32> { using type = uint32_t; };
template <> struct ElementStorage<DType::U16> { using type = uint16_t; };
template <> struct ElementStorage<DType::F8E4M3> { using type = uint8_t; };
template <> struct ElementStorage<DType::F8E5M2> { using type = uint8_t; };
template <> struct ElementStorage<DType::F8E8M0> { using type = uint8_t; };
template <DType D> using FloatElementStorage = ElementStorage<D>;

AOA_HOST_DEVICE constexpr bool isFloat8Element(DType d) {
  return d == DType::F8E4M3 || d == DType::F8E5M2 || d == DType::F8E8M0;
}
AOA_HOST_DEVICE constexpr bool isFloatElement(DType d) {
  return d == DType::F64 || d == DType::F32 || d == DType::F16 ||
         d == DType::BF16 || isFloat8Element(d);
}
AOA_HOST_DEVICE constexpr bool isIntegerElement(DType d) {
  return d == DType::I64 || d == DType::I32 || d == DType::I16 ||
         d == DType::I8 || d == DType::U64 || d == DType::U32 ||
         d == DType::U16 || d == DType::U8;
}
/// The smallest and largest value of an integer dtype (bool: 0 and 1); the
/// largest as uint64_t, which holds uint64's.
AOA_HOST_DEVICE constexpr int64_t integerMin(DType d) {
  return d == DType::I64   ? INT64_MIN
         : d == DType::I32 ? INT32_MIN
         : d == DType::I16 ? INT16_MIN
         : d == DType::I8  ? INT8_MIN
                           : 0;
}
AOA_HOST_DEVICE constexpr uint64_t integerMax(DType d) {
  return d == DType::I64   ? uint64_t(INT64_MAX)
         : d == DType::I32 ? uint64_t(INT32_MAX)
         : d == DType::I16 ? uint64_t(INT16_MAX)
         : d == DType::I8  ? uint64_t(INT8_MAX)
         : d == DType::U64 ? UINT64_MAX
         : d == DType::U32 ? uint64_t(UINT32_MAX)
         : d == DType::U16 ? uint64_t(UINT16_MAX)
         : d == DType::U8  ? uint64_t(UINT8_MAX)
                           : 1;
}
/// Whether the integer `value` (of a signed dtype, or any below 2^63) lies
/// in `d`'s range.
AOA_HOST_DEVICE constexpr bool integerFits(int64_t value, DType d) {
  return value >= integerMin(d) &&
         (value < 0 || uint64_t(value) <= integerMax(d));
}

/// Whether a cast from `From` to `To` can meet a value it has no result
/// for: a float to an integer (NaN, infinities, values out of range), or an
/// integer to a narrower integer range. Such a cast is "checked": its
/// element operation has convertChecked, which clears `ok` instead.
AOA_HOST_DEVICE constexpr bool isCheckedCast(DType from, DType to) {
  if (!isIntegerElement(to))
    return false;
  if (isFloatElement(from))
    return true;
  return integerMin(from) < integerMin(to) || integerMax(from) > integerMax(to);
}

/// A `sizeof(Word)`-byte element, unchanged.
template <typename Word> struct CopyElement {
  using Src = Word;
  using Dst = Word;
  static constexpr bool kChecked = false;
  AOA_HOST_DEVICE static Word convert(Word word) { return word; }
};

/// Any integer as a double, rounded once to nearest even: exact below
/// 2^53; above, the bits below the 53 kept are folded into a sticky last
/// bit (round to odd), so that a further rounding to float32, float16 or
/// bfloat16 (at least 29 bits coarser there) is the one correct rounding
/// of the integer, never a double rounding. `sticky` false gives the
/// correctly rounded double itself.
AOA_HOST_DEVICE inline double integerToDouble(int64_t value, bool sticky) {
  uint64_t magnitude =
      value < 0 ? uint64_t(0) - uint64_t(value) : uint64_t(value);
  if (!sticky || magnitude < (uint64_t(1) << 53))
    return static_cast<double>(value); // exact, or one rounding (rn)
  uint64_t kept = (magnitude >> 11) | ((magnitude & 0x7FFu) != 0 ? 1u : 0u);
  double result = static_cast<double>(kept) * 2048.0; // both exact
  return value < 0 ? -result : result;
}
/// The same for a uint64 value.
AOA_HOST_DEVICE inline double unsignedToDouble(uint64_t value, bool sticky) {
  if (!sticky || value < (uint64_t(1) << 53))
    return static_cast<double>(value); // exact, or one rounding (rn)
  uint64_t kept = (value >> 11) | ((value & 0x7FFu) != 0 ? 1u : 0u);
  return static_cast<double>(kept) * 2048.0; // both exact
}

/// An element converted from `From` to `To` (From != To, both castable), as
/// numpy's astype: between floats with one rounding to nearest even
/// (FloatConversion.h; a double narrows to 16 bits through
/// doubleToFloatRoundToOdd); an integer or bool to a float rounded once to
/// nearest even; a float to an integer truncated toward zero; anything to
/// bool is `!= 0` (NaN is true); bool is 0 or 1. The FP8 formats widen
/// exactly, and are reached as PyTorch's .to() does (Float8Conversion.h):
/// through float32, so a float64 or an int64 rounds to float32 first. A
/// checked cast (isCheckedCast) gives 0 and clears `ok` where the value has
/// no result.
template <DType From, DType To> struct CastElement {
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  static constexpr bool kChecked = isCheckedCast(From, To);

  AOA_HOST_DEVICE static Dst convert(Src value) {
    bool ok = true;
    return convertChecked(value, ok);
  }

  AOA_HOST_DEVICE static Dst convertChecked(Src value, bool &ok) {
    if constexpr (isFloatElement(From) && isFloatElement(To)) {
      if constexpr (From == DType::F64)
        return fromDouble(value);
      else
        return fromFloat(toFloat(value));
    } else if constexpr (To == DType::Bool) {
      if constexpr (isFloatElement(From))
        return Dst(toFloatOrDouble(value) != 0 ? 1 : 0); // NaN != 0
      else
        return Dst(value != 0 ? 1 : 0);
    } else if constexpr (isFloatElement(To)) {
      // An integer or bool source; a double keeps 53 bits, so only int64
      // can need rounding, and narrower targets round from the sticky
      // double once.
      double wide;
      if constexpr (From == DType::U64)
        wide = unsignedToDouble(value, To != DType::F64);
      else
        wide = integerToDouble(From == DType::Bool ? (value != 0 ? 1 : 0)
                                                   : int64_t(value),
                               To != DType::F64);
      if constexpr (To == DType::F64)
        return wide;
      else
        return fromDouble(wide);
    } else if constexpr (isFloatElement(From)) {
      // A float to an integer: truncation where the result is in range.
      double wide = toDouble(value);
      // min - 1 < wide < max + 1; both bounds are exact doubles (2^63 for
      // int64, whose min - 1 rounds to the min itself, hence >=; 2^64 for
      // uint64).
      bool inRange =
          To == DType::I64
              ? wide >= -9223372036854775808.0 && wide < 9223372036854775808.0
          : To == DType::U64
              ? wide > -1.0 && wide < 18446744073709551616.0
              : wide > double(integerMin(To)) - 1.0 &&
                    wide < double(integerMax(To)) + 1.0; // false for NaN
      ok = ok && inRange;
      if (!inRange)
        return Dst(0);
      if constexpr (To == DType::U64)
        return wide <= 0 ? Dst(0) : static_cast<Dst>(wide); // (-1, 0] is 0
      else
        return static_cast<Dst>(static_cast<int64_t>(wide));
    } else {
      // An integer or bool to an integer.
      if constexpr (From == DType::U64) {
        if constexpr (kChecked) {
          bool inRange = value <= integerMax(To);
          ok = ok && inRange;
          return inRange ? static_cast<Dst>(value) : Dst(0);
        } else {
          return static_cast<Dst>(value);
        }
      } else {
        int64_t integer =
            From == DType::Bool ? (value != 0 ? 1 : 0) : int64_t(value);
        if constexpr (kChecked) {
          bool inRange = integerFits(integer, To);
          ok = ok && inRange;
          return inRange ? static_cast<Dst>(integer) : Dst(0);
        } else {
          return static_cast<Dst>(integer);
        }
      }
    }
  }

private:
  AOA_HOST_DEVICE static float toFloat(Src value) {
    if constexpr (From == DType::F16)
      return halfToFloat(value);
    else if constexpr (From == DType::BF16)
      return bfloat16ToFloat(value);
    else if constexpr (From == DType::F8E4M3)
      return float8E4M3ToFloat(value);
    else if constexpr (From == DType::F8E5M2)
      return float8E5M2ToFloat(value);
    else if constexpr (From == DType::F8E8M0)
      return float8E8M0ToFloat(value);
    else
      return value;
  }
  AOA_HOST_DEVICE static auto toFloatOrDouble(Src value) {
    if constexpr (From == DType::F64)
      return value;
    else
      return toFloat(value);
  }
  AOA_HOST_DEVICE static double toDouble(Src value) {
    if constexpr (From == DType::F64)
      return value;
    else
      return static_cast<double>(toFloat(value)); // exact; NaN stays NaN
  }
  /// One rounding into `To` (none into float64). F32 <-> F64 go through
  /// floatToDouble and doubleToFloat, which keep NaN payloads on the GPU too.
  AOA_HOST_DEVICE static Dst fromFloat(float value) {
    if constexpr (To == DType::F16)
      return floatToHalf(value);
    else if constexpr (To == DType::BF16)
      return floatToBFloat16(value);
    else if constexpr (To == DType::F64)
      return floatToDouble(value);
    else if constexpr (To == DType::F8E4M3)
      return floatToFloat8E4M3(value);
    else if constexpr (To == DType::F8E5M2)
      return floatToFloat8E5M2(value);
    else if constexpr (To == DType::F8E8M0)
      return floatToFloat8E8M0(value);
    else
      return value;
  }
  /// A double into `To`: once, except into the FP8 formats, which PyTorch
  /// reaches through float32.
  AOA_HOST_DEVICE static Dst fromDouble(double value) {
    if constexpr (isFloat8Element(To))
      return fromFloat(doubleToFloat(value));
    else if constexpr (To == DType::F16)
      return doubleToHalf(value);
    else if constexpr (To == DType::BF16)
      return doubleToBFloat16(value);
    else if constexpr (To == DType::F64)
      return value;
    else
      return doubleToFloat(value);
  }
};

/// Op::convert, or for a checked operation Op::convertChecked, clearing
/// `ok` where the value has no result. Unchecked operations compile to
/// exactly Op::convert.
template <typename Op>
AOA_HOST_DEVICE inline typename Op::Dst
convertElement(const typename Op::Src &value, bool &ok) {
  if constexpr (Op::kChecked)
    return Op::convertChecked(value, ok);
  else
    return Op::convert(value);
}

/// Records that the element at destination offset `offset` (in elements)
/// has no result: the word keeps the smallest such offset. On the GPU many
/// threads record at once (atomicMin); the host emulation runs one thread.
AOA_HOST_DEVICE inline void recordCastFailure(unsigned long long *word,
                                              unsigned long long offset) {
  if (!word)
    return;
#ifdef __CUDA_ARCH__
  atomicMin(word, offset);
#else
  if (offset < *word)
    *word = offset;
#endif
}

/// How many elements of a cast from `From` to `To` one vector holds: as
/// many as fit 16 bytes on the narrower side (one 16-byte access there, two
/// or four on the wider side), so that each thread has many bytes in flight.
template <DType From, DType To>
constexpr unsigned
    kCastLanes = 16 /
                 unsigned(sizeof(typename FloatElementStorage<From>::type) <
                                  sizeof(typename FloatElementStorage<To>::type)
                              ? sizeof(typename FloatElementStorage<From>::type)
                              : sizeof(typename FloatElementStorage<To>::type));

/// `Lanes` consecutive elements held as one vector, aligned to its size up
/// to 16 bytes (the widest GPU access; a 32- or 64-byte vector is several).
template <typename T, unsigned Lanes>
struct alignas(sizeof(T) * Lanes < 16 ? sizeof(T) * Lanes : 16) LaneVector {
  T lane[Lanes];
};

/// A cast of `Lanes` consecutive elements at once: a contiguous run is
/// loaded and stored as whole vectors rather than as 2- or 4-byte elements
/// (a bf16 -> f32 cast ran at 0.81 of a memcpy's bandwidth element by
/// element on an H200, f32 -> bf16 at 0.69; bench/RESULTS.md). Each lane
/// is converted by CastElement, so the bits are those of the element path.
template <DType From, DType To> struct CastLanes {
  static constexpr unsigned kLanes = kCastLanes<From, To>;
  using Element = CastElement<From, To>;
  static_assert(!Element::kChecked, "checked casts are never moved in lanes");
  static constexpr bool kChecked = false;
  using Src = LaneVector<typename Element::Src, kLanes>;
  using Dst = LaneVector<typename Element::Dst, kLanes>;

  AOA_HOST_DEVICE static Dst convert(const Src &value) {
    Dst result;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (unsigned i = 0; i < kLanes; ++i)
      result.lane[i] = Element::convert(value.lane[i]);
    return result;
  }
};

/// Whether an element operation may run as a tiled transpose: copies of
/// words up to 8 bytes and casts between floats (planStridedCopyLaunch
/// sends every other cast elementwise), so that no tile kernel is
/// instantiated for integer pairs.
template <typename Op> struct MayTranspose : std::false_type {};
template <typename Word>
struct MayTranspose<CopyElement<Word>>
    : std::integral_constant<bool, sizeof(Word) <= 8> {};
template <DType From, DType To>
struct MayTranspose<CastElement<From, To>>
    : std::integral_constant<bool, isFloatElement(From) && isFloatElement(To)> {
};

/// Whether an element operation moves vectors of cast elements.
template <typename Op> struct IsCastLanes : std::false_type {};
template <DType From, DType To>
struct IsCastLanes<CastLanes<From, To>> : std::true_type {};

/// Loads and stores of one element. On the host they are memcpy (plain
/// moves, whatever the alignment). On the GPU an aligned element is one
/// typed access, and a misaligned one (a buffer at an odd offset inside a
/// message) is assembled byte by byte, since a misaligned typed access
/// faults there.
template <typename T, bool Aligned>
AOA_HOST_DEVICE inline T loadStridedElement(const unsigned char *at) {
#ifdef __CUDA_ARCH__
  if constexpr (Aligned) {
    return *reinterpret_cast<const T *>(at);
  } else {
    T value;
    __builtin_memcpy(&value, at, sizeof(T));
    return value;
  }
#else
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
#endif
}

template <typename T, bool Aligned>
AOA_HOST_DEVICE inline void storeStridedElement(unsigned char *at, T value) {
#ifdef __CUDA_ARCH__
  if constexpr (Aligned)
    *reinterpret_cast<T *>(at) = value;
  else
    __builtin_memcpy(at, &value, sizeof(T));
#else
  std::memcpy(at, &value, sizeof(T));
#endif
}

/// Calls `body(Tag())` where Tag::value is `dtype` as a compile-time
/// constant; false, and no call, for an opaque dtype (never cast).
template <typename Body> bool withElementDType(DType dtype, Body &&body) {
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
  case DType::I64:
    body(std::integral_constant<DType, DType::I64>());
    return true;
  case DType::I32:
    body(std::integral_constant<DType, DType::I32>());
    return true;
  case DType::I16:
    body(std::integral_constant<DType, DType::I16>());
    return true;
  case DType::I8:
    body(std::integral_constant<DType, DType::I8>());
    return true;
  case DType::U8:
    body(std::integral_constant<DType, DType::U8>());
    return true;
  case DType::Bool:
    body(std::integral_constant<DType, DType::Bool>());
    return true;
  case DType::U64:
    body(std::integral_constant<DType, DType::U64>());
    return true;
  case DType::U32:
    body(std::integral_constant<DType, DType::U32>());
    return true;
  case DType::U16:
    body(std::integral_constant<DType, DType::U16>());
    return true;
  case DType::F8E4M3:
    body(std::integral_constant<DType, DType::F8E4M3>());
    return true;
  case DType::F8E5M2:
    body(std::integral_constant<DType, DType::F8E5M2>());
    return true;
  case DType::F8E8M0:
    body(std::integral_constant<DType, DType::F8E8M0>());
    return true;
  case DType::F8E4M3Fnuz:
  case DType::F8E5M2Fnuz:
  case DType::C64:
    return false; // opaque: copied, never cast
  }
  return false;
}

/// Calls `body(FromTag(), ToTag())`, whose ::value are `from` and `to` as
/// compile-time constants, when the two dtypes differ (a cast); false, and
/// no call, when they are equal.
template <typename Body>
bool withCastDTypes(DType from, DType to, Body &&body) {
  bool called = false;
  withElementDType(from, [&](auto fromTag) {
    withElementDType(to, [&](auto toTag) {
      if constexpr (std::decay_t<decltype(fromTag)>::value !=
                    std::decay_t<decltype(toTag)>::value) {
        body(fromTag, toTag);
        called = true;
      }
    });
  });
  return called;
}

/// Calls `body(Op())` with the element operation of a strided copy: a copy
/// of `copyWordBytes`-byte words when `isCopy` (1, 2, 4, 8 or 16), else the
/// cast from `from` to `to` (two different dtypes), element by element or,
/// with `castInLanes` (floating dtypes only), kCastLanes<from, to> elements
/// at a time. False, and no call, for anything else.
template <typename Body>
bool withStridedCopyElement(bool isCopy, unsigned copyWordBytes,
                            bool castInLanes, DType from, DType to,
                            Body &&body) {
  if (isCopy) {
    switch (copyWordBytes) {
    case 1:
      body(CopyElement<uint8_t>());
      return true;
    case 2:
      body(CopyElement<uint16_t>());
      return true;
    case 4:
      body(CopyElement<uint32_t>());
      return true;
    case 8:
      body(CopyElement<uint64_t>());
      return true;
    case 16:
      body(CopyElement<Word16>());
      return true;
    default:
      return false;
    }
  }
  bool called = false;
  withCastDTypes(from, to, [&](auto fromTag, auto toTag) {
    constexpr DType fromValue = decltype(fromTag)::value;
    constexpr DType toValue = decltype(toTag)::value;
    // Only casts between floats move in lanes (planStridedCopyLaunch); the
    // others are not instantiated as lanes at all.
    if constexpr (isFloatElement(fromValue) && isFloatElement(toValue)) {
      if (castInLanes)
        body(CastLanes<fromValue, toValue>());
      else
        body(CastElement<fromValue, toValue>());
      called = true;
    } else if (!castInLanes) {
      body(CastElement<fromValue, toValue>());
      called = true;
    }
  });
  return called;
}

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_STRIDEDCOPYELEMENT_H
