//===- FastCastTest.cpp - Vector casts against the scalar reference -------===//
//
// castElements runs the casts between floats that involve float16 or an FP8
// format through vector loops (runtime/transforms/lib/FastCast.h). These
// tests compare their bits with the scalar element conversion
// (CastElement::convert, i.e. FloatConversion.h and Float8Conversion.h):
// every input of the 8- and 16-bit sources; for float32 and float64
// sources the special classes, every rounding boundary of each target
// (midpoints and their neighbours) and millions of random bit patterns; and
// block tails, misaligned buffers, streamed (8 MiB) destinations and casts
// in place.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include "CastMismatch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace aoa;
using namespace aoa::runtime;

namespace {

constexpr DType kFloatDTypes[] = {DType::F64,   DType::F32,    DType::F16,
                                  DType::BF16,  DType::F8E4M3, DType::F8E5M2,
                                  DType::F8E8M0};

/// The first input whose castElements result differs in its bits from the
/// scalar reference (test::castMismatchText); empty when all agree.
/// `inputs` holds elements of `From`'s storage.
template <DType From, DType To>
std::string firstMismatch(const std::vector<unsigned char> &inputs,
                          size_t srcOffset = 0, size_t dstOffset = 0) {
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  size_t count = (inputs.size() - srcOffset) / sizeof(Src);
  std::vector<unsigned char> out(count * sizeof(Dst) + dstOffset);
  Status status = castElements(From, inputs.data() + srcOffset, To,
                               out.data() + dstOffset, count);
  if (!status)
    return status.error().message;
  return test::firstCastMismatch<From, To>(inputs.data() + srcOffset,
                                           out.data() + dstOffset, count);
}

/// Runs firstMismatch for `from` against every other float dtype.
template <typename Inputs>
void expectAllTargetsMatch(DType from, const Inputs &inputs) {
  for (DType to : kFloatDTypes)
    withCastDTypes(from, to, [&](auto fromTag, auto toTag) {
      constexpr DType fromValue = decltype(fromTag)::value;
      constexpr DType toValue = decltype(toTag)::value;
      if constexpr (isFloatElement(fromValue) && isFloatElement(toValue)) {
        EXPECT_EQ((firstMismatch<fromValue, toValue>(inputs(fromValue))), "");
      }
    });
}

template <typename T>
std::vector<unsigned char> bytesOf(const std::vector<T> &v) {
  std::vector<unsigned char> bytes(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

/// Every pattern of a `bytes`-byte dtype.
std::vector<unsigned char> everyPattern(size_t bytes) {
  std::vector<unsigned char> all;
  if (bytes == 1) {
    for (int i = 0; i < 256; ++i)
      all.push_back(static_cast<unsigned char>(i));
  } else {
    std::vector<uint16_t> values(65536);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<uint16_t>(i);
    all = bytesOf(values);
  }
  return all;
}

/// Float32 patterns of both signs: zeros, infinities, NaNs (quiet,
/// signalling, with payloads), subnormals, the extremes; then, for every
/// value of the bits above the low `dropped` ones, the low bits just at,
/// below and above a midpoint and at the ends of the range (the rounding
/// boundaries of a target with 23 - `dropped` mantissa bits, subnormal
/// results included, whose boundaries sit on coarser bits).
std::vector<uint32_t> floatBoundaries(unsigned dropped) {
  std::vector<uint32_t> bits = {
      0x00000000u, 0x7F800000u, 0x7FC00000u, 0x7F800001u, 0x7FBFFFFFu,
      0x7FFFFFFFu, 0x7FD55555u, 0x7FA00000u, 0x00000001u, 0x007FFFFFu,
      0x00400000u, 0x00800000u, 0x7F7FFFFFu, 0x3F800000u, 0x477FE000u,
      0x477FEFFFu, 0x477FF000u, 0x43E00000u, 0x43E80000u, 0x43F00000u,
      0x47600000u, 0x47700000u, 0x7F000000u, 0x7F400000u};
  uint32_t half = 1u << (dropped - 1), full = (1u << dropped) - 1;
  const uint32_t lows[] = {0, 1, half - 1, half, half + 1, full};
  for (uint32_t top = 0; top < (1u << (31 - dropped)); ++top)
    for (uint32_t low : lows)
      bits.push_back((top << dropped) | low);
  size_t positive = bits.size();
  for (size_t i = 0; i < positive; ++i)
    bits.push_back(bits[i] | 0x80000000u);
  return bits;
}

std::vector<uint32_t> randomFloatBits(size_t count, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<uint32_t> bits(count);
  for (uint32_t &b : bits)
    b = rng();
  return bits;
}

TEST(FastCast, EveryFloat16AndBFloat16PatternMatchesTheReference) {
  auto inputs = [](DType) { return everyPattern(2); };
  expectAllTargetsMatch(DType::F16, inputs);
  expectAllTargetsMatch(DType::BF16, inputs);
}

TEST(FastCast, RandomSixteenBitMixesMatchTheReference) {
  // Vectors whose lanes mix the ranges that bfloat16 -> float16 / FP8
  // narrow in 16-bit lanes with those that go through float32, which
  // consecutive patterns rarely do.
  std::vector<uint32_t> random = randomFloatBits(500000, 5);
  std::vector<unsigned char> inputs = bytesOf(random);
  expectAllTargetsMatch(DType::BF16, [&](DType) { return inputs; });
  expectAllTargetsMatch(DType::F16, [&](DType) { return inputs; });
}

TEST(FastCast, EveryFloat8PatternMatchesTheReference) {
  auto inputs = [](DType) { return everyPattern(1); };
  expectAllTargetsMatch(DType::F8E4M3, inputs);
  expectAllTargetsMatch(DType::F8E5M2, inputs);
  expectAllTargetsMatch(DType::F8E8M0, inputs);
}

TEST(FastCast, Float32RoundingBoundariesMatchTheReference) {
  // float16 (13 bits dropped), bfloat16 (16), e4m3fn (20), e5m2 (21),
  // e8m0 (23, the whole mantissa).
  for (unsigned dropped : {13u, 16u, 20u, 21u, 23u}) {
    SCOPED_TRACE("dropped bits: " + std::to_string(dropped));
    std::vector<unsigned char> inputs = bytesOf(floatBoundaries(dropped));
    expectAllTargetsMatch(DType::F32, [&](DType) { return inputs; });
  }
}

TEST(FastCast, RandomFloat32PatternsMatchTheReference) {
  std::vector<unsigned char> inputs = bytesOf(randomFloatBits(4000000, 7));
  expectAllTargetsMatch(DType::F32, [&](DType) { return inputs; });
}

TEST(FastCast, Float64ToFloat8MatchesTheReference) {
  // Float32 boundaries widened, each with the doubles a few ulps around it
  // (float64 reaches FP8 through float32, so these decide both roundings),
  // and random float64 patterns.
  std::vector<double> values;
  for (unsigned dropped : {20u, 21u, 23u})
    for (uint32_t bits : floatBoundaries(dropped)) {
      float narrow;
      std::memcpy(&narrow, &bits, 4);
      uint64_t wide;
      double widened = static_cast<double>(narrow);
      std::memcpy(&wide, &widened, 8);
      for (int64_t delta : {-2, -1, 0, 1, 2, 1 << 28, -(1 << 28)}) {
        uint64_t near = wide + uint64_t(delta);
        double value;
        std::memcpy(&value, &near, 8);
        values.push_back(value);
      }
    }
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000000; ++i) {
    uint64_t bits = rng();
    double value;
    std::memcpy(&value, &bits, 8);
    values.push_back(value);
  }
  std::vector<unsigned char> inputs = bytesOf(values);
  EXPECT_EQ((firstMismatch<DType::F64, DType::F8E4M3>(inputs)), "");
  EXPECT_EQ((firstMismatch<DType::F64, DType::F8E5M2>(inputs)), "");
  EXPECT_EQ((firstMismatch<DType::F64, DType::F8E8M0>(inputs)), "");
}

TEST(FastCast, BlockTailsAndMisalignedBuffersMatchTheReference) {
  // Lengths around the 512-element blocks and the vector widths, buffers at
  // odd addresses.
  std::vector<uint32_t> random = randomFloatBits(1100, 3);
  for (size_t count : {0u, 1u, 3u, 7u, 15u, 17u, 511u, 512u, 513u, 1025u}) {
    for (size_t srcOffset : {0u, 1u, 3u})
      for (size_t dstOffset : {0u, 1u}) {
        SCOPED_TRACE(std::to_string(count) + " elements, offsets " +
                     std::to_string(srcOffset) + ", " +
                     std::to_string(dstOffset));
        std::vector<unsigned char> bytes(srcOffset);
        std::vector<unsigned char> values = bytesOf(random);
        bytes.insert(bytes.end(), values.begin(), values.begin() + 4 * count);
        EXPECT_EQ((firstMismatch<DType::F32, DType::F16>(bytes, srcOffset,
                                                         dstOffset)),
                  "");
        std::vector<unsigned char> halves(srcOffset);
        halves.insert(halves.end(), values.begin(), values.begin() + 2 * count);
        EXPECT_EQ((firstMismatch<DType::F16, DType::F8E4M3>(halves, srcOffset,
                                                            dstOffset)),
                  "");
        EXPECT_EQ((firstMismatch<DType::BF16, DType::F32>(halves, srcOffset,
                                                          dstOffset)),
                  "");
      }
  }
}

TEST(FastCast, StreamedWideningsMatchTheReference) {
  // Destinations from 8 MiB on are written with streaming stores, which
  // the widenings make straight from their registers: every pattern,
  // repeated, plus a tail; the destination 16-byte aligned, or 4 bytes
  // past (a few elements before the first streamed one); the tails leave
  // a last block with whole vectors and a few elements more.
  std::vector<unsigned char> halves;
  for (int copy = 0; copy < 33; ++copy) {
    std::vector<unsigned char> all = everyPattern(2);
    halves.insert(halves.end(), all.begin(), all.end());
  }
  halves.resize(halves.size() + 2 * 13, 0x3C);
  std::vector<unsigned char> bytes;
  for (int copy = 0; copy < 16500; ++copy) {
    std::vector<unsigned char> all = everyPattern(1);
    bytes.insert(bytes.end(), all.begin(), all.end());
  }
  bytes.resize(bytes.size() + 21, 0x41);
  for (size_t dstOffset : {0u, 4u}) {
    SCOPED_TRACE("destination offset " + std::to_string(dstOffset));
    EXPECT_EQ((firstMismatch<DType::F16, DType::F32>(halves, 0, dstOffset)),
              "");
    EXPECT_EQ((firstMismatch<DType::BF16, DType::F32>(halves, 0, dstOffset)),
              "");
    EXPECT_EQ((firstMismatch<DType::F8E4M3, DType::F32>(bytes, 0, dstOffset)),
              "");
    EXPECT_EQ((firstMismatch<DType::F8E5M2, DType::BF16>(bytes, 0, dstOffset)),
              "");
  }
}

TEST(FastCast, StreamedSixteenBitNarrowingsMatchTheReference) {
  // bfloat16 <-> float16 into 8 MiB and more are streamed from the 16-bit
  // lanes' registers: every pattern 65 times and a tail of 13 (whole
  // vectors and 5 elements more in the last block); the destination
  // 16-byte aligned, or 2 bytes past it; and in place.
  std::vector<unsigned char> halves;
  for (int copy = 0; copy < 65; ++copy) {
    std::vector<unsigned char> all = everyPattern(2);
    halves.insert(halves.end(), all.begin(), all.end());
  }
  halves.resize(halves.size() + 2 * 13, 0x01);
  for (size_t dstOffset : {0u, 2u}) {
    SCOPED_TRACE("destination offset " + std::to_string(dstOffset));
    EXPECT_EQ((firstMismatch<DType::F16, DType::BF16>(halves, 0, dstOffset)),
              "");
    EXPECT_EQ((firstMismatch<DType::BF16, DType::F16>(halves, 0, dstOffset)),
              "");
  }
  size_t count = halves.size() / 2;
  for (auto [from, to] : {std::pair(DType::F16, DType::BF16),
                          std::pair(DType::BF16, DType::F16)}) {
    std::vector<unsigned char> separate(halves.size());
    ASSERT_TRUE(castElements(from, halves.data(), to, separate.data(), count));
    std::vector<unsigned char> inPlace = halves;
    ASSERT_TRUE(castElements(from, inPlace.data(), to, inPlace.data(), count));
    EXPECT_TRUE(inPlace == separate) << dtypeName(from);
  }
}

TEST(FastCast, InPlaceCastsOfEqualSizesMatchTheReference) {
  std::vector<unsigned char> halves = everyPattern(2);
  std::vector<unsigned char> inPlace = halves;
  ASSERT_TRUE(castElements(DType::F16, inPlace.data(), DType::BF16,
                           inPlace.data(), 65536));
  std::vector<unsigned char> separate(halves.size());
  ASSERT_TRUE(castElements(DType::F16, halves.data(), DType::BF16,
                           separate.data(), 65536));
  EXPECT_EQ(inPlace, separate);

  std::vector<unsigned char> bytes = everyPattern(1);
  std::vector<unsigned char> bytesInPlace = bytes;
  ASSERT_TRUE(castElements(DType::F8E5M2, bytesInPlace.data(), DType::F8E4M3,
                           bytesInPlace.data(), 256));
  std::vector<unsigned char> bytesSeparate(256);
  ASSERT_TRUE(castElements(DType::F8E5M2, bytes.data(), DType::F8E4M3,
                           bytesSeparate.data(), 256));
  EXPECT_EQ(bytesInPlace, bytesSeparate);
}

} // namespace
