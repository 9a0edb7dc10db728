//===- FastCastAvx2Test.cpp - AVX2 and SSE2 cast kernels, side by side ----===//
//
// castRun picks the AVX2 and F16C kernels (runtime/transforms/lib/
// FastCastAvx2.h) where the CPU has them and the SSE2 ones elsewhere, so a
// test of castElements on one machine sees only one of them. These tests
// run both through castRunWith, and the AVX2 steps alone through
// avx2::castWhole, on every bit pattern of each source the AVX2 kernels
// take (all 256 or 65,536), at every lane position of a step (the patterns
// shifted by 0 to 32 elements), with tails, into destinations aligned and
// misaligned, streamed and not, and in place; and compare their results
// with the element conversion (CastElement) byte for byte. The AVX2 tests
// are skipped on a CPU without AVX2 and F16C.
//
//===----------------------------------------------------------------------===//
#include "FastCast.h"

#include "CastMismatch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace aoa;
using namespace aoa::runtime;
using fastcast::CastKernels;

namespace {

/// Every pattern of a `bytes`-byte dtype, `copies` times.
std::vector<unsigned char> everyPattern(size_t bytes, int copies) {
  std::vector<unsigned char> all;
  size_t patterns = size_t(1) << (8 * bytes);
  for (int copy = 0; copy < copies; ++copy)
    for (size_t value = 0; value < patterns; ++value)
      for (size_t byte = 0; byte < bytes; ++byte)
        all.push_back(static_cast<unsigned char>(value >> (8 * byte)));
  return all;
}

/// castRunWith(`kernels`) of every pattern of `From` (four times for an
/// 8-bit source), after 0 to 32 leading elements (every lane position of a
/// step; the counts leave tails of 0 to 32 elements), into a destination
/// at a 32-byte boundary, one element past it, or one byte past it (no
/// streaming), streamed (partOfLargeCopy) and not; and in place for equal
/// sizes.
template <DType From, DType To> void expectEveryPatternMatches(CastKernels k) {
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  std::vector<unsigned char> patterns =
      everyPattern(sizeof(Src), sizeof(Src) == 1 ? 4 : 1);
  for (size_t lead = 0; lead <= 32; ++lead) {
    std::vector<unsigned char> in(lead * sizeof(Src), 0x3C);
    in.insert(in.end(), patterns.begin(), patterns.end());
    size_t count = in.size() / sizeof(Src);
    for (size_t dstOffset : {size_t(0), sizeof(Dst), size_t(1)}) {
      for (bool streamed : {false, true}) {
        SCOPED_TRACE("lead " + std::to_string(lead) + ", destination offset " +
                     std::to_string(dstOffset) +
                     (streamed ? ", streamed" : ""));
        // Over-allocated so that the destination can start at a 32-byte
        // boundary.
        std::vector<unsigned char> storage(count * sizeof(Dst) + 64);
        unsigned char *out =
            storage.data() +
            (32 - reinterpret_cast<uintptr_t>(storage.data()) % 32) % 32 +
            dstOffset;
        uint64_t failure = fastcast::castRunWith<From, To>(
            k, reinterpret_cast<const std::byte *>(in.data()),
            reinterpret_cast<std::byte *>(out), count, streamed);
        EXPECT_EQ(failure, kNoCastFailure);
        EXPECT_EQ((test::firstCastMismatch<From, To>(in.data(), out, count)),
                  "");
      }
    }
    if constexpr (sizeof(Src) == sizeof(Dst)) {
      SCOPED_TRACE("in place, lead " + std::to_string(lead));
      std::vector<unsigned char> inPlace = in;
      fastcast::castRunWith<From, To>(
          k, reinterpret_cast<const std::byte *>(inPlace.data()),
          reinterpret_cast<std::byte *>(inPlace.data()), count);
      EXPECT_EQ((test::firstCastMismatch<From, To>(in.data(), inPlace.data(),
                                                   count)),
                "");
    }
  }
}

/// expectEveryPatternMatches for every cast that has an AVX2 kernel.
void expectEveryCastMatches(CastKernels kernels) {
  expectEveryPatternMatches<DType::F16, DType::F32>(kernels);
  expectEveryPatternMatches<DType::F16, DType::BF16>(kernels);
  expectEveryPatternMatches<DType::BF16, DType::F16>(kernels);
  expectEveryPatternMatches<DType::F16, DType::F8E4M3>(kernels);
  expectEveryPatternMatches<DType::F16, DType::F8E5M2>(kernels);
  expectEveryPatternMatches<DType::BF16, DType::F8E4M3>(kernels);
  expectEveryPatternMatches<DType::BF16, DType::F8E5M2>(kernels);
  expectEveryPatternMatches<DType::F8E4M3, DType::F32>(kernels);
  expectEveryPatternMatches<DType::F8E4M3, DType::BF16>(kernels);
  expectEveryPatternMatches<DType::F8E4M3, DType::F16>(kernels);
  expectEveryPatternMatches<DType::F8E5M2, DType::F32>(kernels);
  expectEveryPatternMatches<DType::F8E5M2, DType::BF16>(kernels);
  expectEveryPatternMatches<DType::F8E5M2, DType::F16>(kernels);
  expectEveryPatternMatches<DType::I8, DType::F32>(kernels);
  expectEveryPatternMatches<DType::I8, DType::BF16>(kernels);
  expectEveryPatternMatches<DType::U8, DType::F32>(kernels);
  expectEveryPatternMatches<DType::U8, DType::BF16>(kernels);
  expectEveryPatternMatches<DType::Bool, DType::F32>(kernels);
  expectEveryPatternMatches<DType::Bool, DType::BF16>(kernels);
}

/// avx2::castWhole alone, unaligned: every pattern after 0 to 16 leading
/// elements, converted up to the last whole step and no further.
template <DType From, DType To> void expectWholeStepsMatch() {
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  constexpr size_t step = fastcast::avx2::stepOf(From, To);
  std::vector<unsigned char> patterns = everyPattern(sizeof(Src), 1);
  for (size_t lead = 0; lead <= 32; ++lead) {
    SCOPED_TRACE("lead " + std::to_string(lead));
    std::vector<unsigned char> in(lead * sizeof(Src), 0x41);
    in.insert(in.end(), patterns.begin(), patterns.end());
    size_t count = in.size() / sizeof(Src);
    std::vector<unsigned char> out((count + 1) * sizeof(Dst) + 1, 0xA5);
    size_t done = fastcast::avx2::castWhole<From, To>(
        reinterpret_cast<const std::byte *>(in.data()),
        reinterpret_cast<std::byte *>(out.data() + 1), count, false);
    EXPECT_EQ(done, count - count % step);
    EXPECT_EQ(
        (test::firstCastMismatch<From, To>(in.data(), out.data() + 1, done)),
        "");
    EXPECT_EQ(out[1 + done * sizeof(Dst)], 0xA5) << "written past the steps";
  }
}

TEST(FastCastAvx2, Sse2KernelsMatchTheElementConversion) {
  expectEveryCastMatches(CastKernels::Sse2);
}

TEST(FastCastAvx2, Avx2KernelsMatchTheElementConversion) {
  if (!fastcast::avx2::isAvailable())
    GTEST_SKIP() << "this CPU lacks AVX2 or F16C: the AVX2 kernels never run";
  expectEveryCastMatches(CastKernels::Avx2F16c);
}

TEST(FastCastAvx2, Avx2StepsAloneMatchTheElementConversion) {
  if (!fastcast::avx2::isAvailable())
    GTEST_SKIP() << "this CPU lacks AVX2 or F16C: the AVX2 kernels never run";
  expectWholeStepsMatch<DType::F16, DType::F32>();
  expectWholeStepsMatch<DType::F16, DType::BF16>();
  expectWholeStepsMatch<DType::BF16, DType::F16>();
  expectWholeStepsMatch<DType::F16, DType::F8E4M3>();
  expectWholeStepsMatch<DType::F16, DType::F8E5M2>();
  expectWholeStepsMatch<DType::BF16, DType::F8E4M3>();
  expectWholeStepsMatch<DType::BF16, DType::F8E5M2>();
  expectWholeStepsMatch<DType::F8E4M3, DType::F32>();
  expectWholeStepsMatch<DType::F8E4M3, DType::BF16>();
  expectWholeStepsMatch<DType::F8E4M3, DType::F16>();
  expectWholeStepsMatch<DType::F8E5M2, DType::F32>();
  expectWholeStepsMatch<DType::F8E5M2, DType::BF16>();
  expectWholeStepsMatch<DType::F8E5M2, DType::F16>();
  expectWholeStepsMatch<DType::I8, DType::F32>();
  expectWholeStepsMatch<DType::I8, DType::BF16>();
  expectWholeStepsMatch<DType::U8, DType::F32>();
  expectWholeStepsMatch<DType::U8, DType::BF16>();
  expectWholeStepsMatch<DType::Bool, DType::F32>();
  expectWholeStepsMatch<DType::Bool, DType::BF16>();
}

} // namespace
