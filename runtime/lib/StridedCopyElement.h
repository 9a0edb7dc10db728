//===- StridedCopyElement.h - One element of a strided copy -----*- C++ -*-===//
//
// Private to the runtime library; included by C++ and by CUDA sources. How
// one element of a StridedCopy's source becomes one element of its
// destination, as host and device code at once (HostDevice.h): the CUDA
// kernels and the emulated device run exactly this, so the GPU gives the
// bits the CPU gives.
//
// An element operation has storage types Src and Dst and a static convert().
// CopyElement moves a word unchanged (a same-dtype copy; contiguous runs are
// moved as wider words, up to 16 bytes); CastElement converts between
// floating dtypes with FloatConversion.h (a double narrows to 16 bits
// through doubleToFloatRoundToOdd, so it rounds once); the CPU's copies
// (ElementOps.h) cast with it too. Kernels are templates over the
// operation: the dtype pair is picked once per copy (withStridedCopyElement),
// never per element.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_LIB_STRIDEDCOPYELEMENT_H
#define AOA_RUNTIME_LIB_STRIDEDCOPYELEMENT_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/FloatConversion.h"
#include "aoa/runtime/HostDevice.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace aoa::runtime {

/// 16 bytes moved as one load and one store on the GPU.
struct alignas(16) Word16 {
  uint64_t low;
  uint64_t high;
};

/// How a floating dtype's elements are held in memory.
template <DType D> struct FloatElementStorage;
template <> struct FloatElementStorage<DType::F64> { using type = double; };
template <> struct FloatElementStorage<DType::F32> { using type = float; };
template <> struct FloatElementStorage<DType::F16> { using type = uint16_t; };
template <> struct FloatElementStorage<DType::BF16> { using type = uint16_t; };

/// A `sizeof(Word)`-byte element, unchanged.
template <typename Word> struct CopyElement {
  using Src = Word;
  using Dst = Word;
  AOA_HOST_DEVICE static Word convert(Word word) { return word; }
};

/// A floating element converted from `From` to `To` (From != To). Every
/// value of a narrower type is exactly a float, so only a double source
/// needs its own rounding path.
template <DType From, DType To> struct CastElement {
  using Src = typename FloatElementStorage<From>::type;
  using Dst = typename FloatElementStorage<To>::type;

  AOA_HOST_DEVICE static Dst convert(Src value) {
    if constexpr (From == DType::F64)
      return fromDouble(value);
    else
      return fromFloat(toFloat(value));
  }

private:
  AOA_HOST_DEVICE static float toFloat(Src value) {
    if constexpr (From == DType::F16)
      return halfToFloat(value);
    else if constexpr (From == DType::BF16)
      return bfloat16ToFloat(value);
    else
      return value;
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
    else
      return value;
  }
  AOA_HOST_DEVICE static Dst fromDouble(double value) {
    if constexpr (To == DType::F16)
      return doubleToHalf(value);
    else if constexpr (To == DType::BF16)
      return doubleToBFloat16(value);
    else
      return doubleToFloat(value);
  }
};

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
/// constant; false when `dtype` is not floating.
template <typename Body> bool withFloatElementDType(DType dtype, Body &&body) {
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

/// Calls `body(Op())` with the element operation of a strided copy: a copy
/// of `copyWordBytes`-byte words when `isCopy` (1, 2, 4, 8 or 16), else the
/// cast from `from` to `to` (two different floating dtypes), element by
/// element or, with `castInLanes`, kCastLanes<from, to> elements at a time.
/// False, and no call, for anything else.
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
  withFloatElementDType(from, [&](auto fromTag) {
    withFloatElementDType(to, [&](auto toTag) {
      constexpr DType fromValue = decltype(fromTag)::value;
      constexpr DType toValue = decltype(toTag)::value;
      if constexpr (fromValue != toValue) {
        if (castInLanes)
          body(CastLanes<fromValue, toValue>());
        else
          body(CastElement<fromValue, toValue>());
        called = true;
      }
    });
  });
  return called;
}

} // namespace aoa::runtime

#endif // AOA_RUNTIME_LIB_STRIDEDCOPYELEMENT_H
