//===- FastCastAvx2.h - AVX2 and F16C cast kernels --------------*- C++ -*-===//
//
// Private to the runtime library (FastCast.h). The casts that the SSE2
// kernels left at or below half a memcpy's bandwidth, in AVX2 and F16C,
// chosen at run time: the project builds for baseline x86-64, so only the
// functions of FastCastAvx2.cpp use the wider instructions, and castRun
// calls them where isAvailable() says this CPU has them; elsewhere the SSE2
// kernels run. F16C converts float16 to float32 exactly, subnormals
// included, which is what SSE2 spends most of its time on, and float32 to
// float16 rounded as floatToHalf; float8_e5m2 (a float16's top byte) and
// 8-bit integers reach float32 through it or AVX2's widening moves,
// float8_e4m3fn in byte lanes; float16 and bfloat16 reach the FP8 formats
// in 16-bit lanes as in SSE2, sixteen lanes an instruction. Each kernel
// gives exactly the bits of the element conversion (CastElement), as the
// SSE2 kernels do (FastCastAvx2Test.cpp compares both with it on every
// source pattern).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTAVX2_H
#define AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTAVX2_H

#include "aoa/ir/DType.h"

#include <cstddef>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define AOA_FASTCAST_AVX2 1
#include <cpuid.h>
#endif

namespace aoa::runtime::fastcast::avx2 {

/// Whether this CPU (and its operating system: the check covers the
/// 256-bit register state) runs AVX2 and F16C code; detected once, on first
/// use (a function-local static, thread-safe and never changed), then a
/// load and a predicted branch for each cast run.
inline bool isAvailable() {
#if defined(AOA_FASTCAST_AVX2)
  static const bool available = [] {
    __builtin_cpu_init();
#if defined(__clang__)
    // Clang 14 knows no "f16c" here: CPUID leaf 1, ECX bit 29 (its
    // registers are the AVX ones, whose support the avx2 check covers).
    unsigned eax, ebx, ecx, edx;
    bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
#else
    bool f16c = __builtin_cpu_supports("f16c");
#endif
    return __builtin_cpu_supports("avx2") && f16c;
  }();
  return available;
#else
  return false;
#endif
}

/// Whether castWhole converts `from` to `to`: float16 to float32 and
/// bfloat16, bfloat16 to float16, float16 and bfloat16 to float8_e4m3fn
/// and float8_e5m2, those two to float32, bfloat16 and float16, and int8,
/// uint8 and bool to float32 and bfloat16 (none of them can fail).
constexpr bool hasKernel(DType from, DType to) {
  bool fromFloat8 = from == DType::F8E4M3 || from == DType::F8E5M2;
  bool toFloat8 = to == DType::F8E4M3 || to == DType::F8E5M2;
  bool fromByteInteger =
      from == DType::I8 || from == DType::U8 || from == DType::Bool;
  return (from == DType::F16 && (to == DType::F32 || to == DType::BF16)) ||
         (from == DType::BF16 && to == DType::F16) ||
         ((from == DType::F16 || from == DType::BF16) && toFloat8) ||
         (fromFloat8 &&
          (to == DType::F32 || to == DType::BF16 || to == DType::F16)) ||
         (fromByteInteger && (to == DType::F32 || to == DType::BF16));
}

/// Elements castWhole converts a step: 32 bytes of results, or 32
/// elements from float8_e4m3fn.
constexpr size_t stepOf(DType from, DType to) {
  if (to == DType::F8E4M3 || to == DType::F8E5M2 || from == DType::F8E4M3)
    return 32;
  return to == DType::F32 && from != DType::F8E4M3 ? 8 : 16;
}

/// Converts the first count - count % stepOf(From, To) elements of `From` at
/// `src` to `To` at `dst` (hasKernel(From, To)) and returns how many; only
/// where isAvailable(). With `streaming`, `dst` is 32-byte aligned and
/// written with streaming stores (the caller fences). Each step reads its
/// elements before it writes, so a cast between equal sizes may work in
/// place.
template <DType From, DType To>
size_t castWhole(const std::byte *src, std::byte *dst, size_t count,
                 bool streaming);

} // namespace aoa::runtime::fastcast::avx2

#endif // AOA_RUNTIME_TRANSFORMS_LIB_FASTCASTAVX2_H
