//===- Float8CastTest.cpp - FP8 and unsigned casts, opaque dtypes ---------===//
//
// The FP8 conversions at their hard places (ties, the overflow edges, the
// subnormal range, NaN and Inf, PyTorch's float64 -> float32 -> FP8 double
// rounding), all 256 patterns of each format widened against an ldexp
// decoding, the checked casts of the unsigned integers, and the opaque
// dtypes that are only moved. The exhaustive comparison of all 65,536
// bfloat16 and float16 patterns with a table built from the formats'
// definitions is test/e2e/cast-fp8-exhaustive.test.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/Float8Conversion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <optional>
#include <vector>

using namespace aoa;
using namespace aoa::runtime;
using ::testing::HasSubstr;

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

/// `values` cast from float32 to `to` (an FP8 dtype), as bits.
std::vector<int> fromFloats(std::vector<float> values, DType to) {
  std::vector<uint8_t> out(values.size());
  EXPECT_TRUE(
      castElements(DType::F32, values.data(), to, out.data(), values.size()));
  return std::vector<int>(out.begin(), out.end());
}

/// The value of an FP8 pattern by its definition: sign, exponent field
/// `e` with `bias`, mantissa `m` of `mantissaBits` bits.
double decodeFloat8(int bits, int exponentBits, int mantissaBits, int bias) {
  int sign = bits >> 7;
  int e = (bits >> mantissaBits) & ((1 << exponentBits) - 1);
  int m = bits & ((1 << mantissaBits) - 1);
  double magnitude = e == 0 ? std::ldexp(double(m), 1 - bias - mantissaBits)
                            : std::ldexp(double(m + (1 << mantissaBits)),
                                         e - bias - mantissaBits);
  return sign ? -magnitude : magnitude;
}

TEST(Float8Cast, E4M3RoundsToNearestEvenAndOverflowsToNaN) {
  float tiny = std::ldexp(1.0f, -10); // half the smallest subnormal 2^-9
  EXPECT_EQ(fromFloats({448.0f, 464.0f, 464.0001f, 479.9f, 480.0f, -500.0f,
                        INFINITY, -INFINITY, NAN, -NAN},
                       DType::F8E4M3),
            (std::vector<int>{0x7E, 0x7E, 0x7F, 0x7F, 0x7F, 0xFF, 0x7F, 0xFF,
                              0x7F, 0xFF}));
  EXPECT_EQ(
      fromFloats({tiny, -tiny, 3 * tiny, std::nextafter(tiny, 1.0f), 0.0f,
                  -0.0f, 1.0625f, 1.1875f, std::ldexp(15.0f, -10)},
                 DType::F8E4M3),
      (std::vector<int>{0x00, 0x80, 0x02, 0x01, 0x00, 0x80, 0x38, 0x3A, 0x08}));
}

TEST(Float8Cast, E5M2RoundsToNearestEvenAndOverflowsToInf) {
  EXPECT_EQ(fromFloats({57344.0f, 61439.996f, 61440.0f, -70000.0f, INFINITY,
                        -INFINITY, NAN, -NAN, std::ldexp(1.0f, -17),
                        std::ldexp(3.0f, -17), -0.0f},
                       DType::F8E5M2),
            (std::vector<int>{0x7B, 0x7B, 0x7C, 0xFC, 0x7C, 0xFC, 0x7F, 0xFF,
                              0x00, 0x02, 0x80}));
}

TEST(Float8Cast, E8M0FollowsPyTorchsRule) {
  // 2^k, or 2^(k+1) from 1.5 * 2^k; the sign is dropped; at or below
  // 2^-127 (zero too) gives 2^-127, just above it 2^-126; NaN and Inf NaN.
  EXPECT_EQ(fromFloats({1.0f, 1.4999999f, 1.5f, -4.0f, 0.0f, -0.0f,
                        std::ldexp(1.0f, -127), std::ldexp(1.25f, -127),
                        std::ldexp(1.5f, 127), std::ldexp(1.25f, 127), NAN,
                        -INFINITY},
                       DType::F8E8M0),
            (std::vector<int>{0x7F, 0x7F, 0x80, 0x81, 0x00, 0x00, 0x00, 0x01,
                              0xFF, 0xFE, 0xFF, 0xFF}));
}

TEST(Float8Cast, EveryPatternWidensExactly) {
  struct Format {
    DType dtype;
    int exponentBits, mantissaBits, bias;
  };
  for (Format f :
       {Format{DType::F8E4M3, 4, 3, 7}, Format{DType::F8E5M2, 5, 2, 15}}) {
    std::vector<uint8_t> all(256);
    for (int i = 0; i < 256; ++i)
      all[i] = uint8_t(i);
    std::vector<double> wide(256);
    ASSERT_TRUE(
        castElements(f.dtype, all.data(), DType::F64, wide.data(), 256));
    for (int i = 0; i < 256; ++i) {
      int e = (i >> f.mantissaBits) & ((1 << f.exponentBits) - 1);
      int m = i & ((1 << f.mantissaBits) - 1);
      bool nan =
          f.dtype == DType::F8E4M3 ? (i & 0x7F) == 0x7F : e == 31 && m != 0;
      bool inf = f.dtype == DType::F8E5M2 && e == 31 && m == 0;
      if (nan) {
        EXPECT_TRUE(std::isnan(wide[i])) << i;
        EXPECT_EQ(std::signbit(wide[i]), i >= 0x80) << i;
      } else if (inf) {
        EXPECT_EQ(wide[i], i >= 0x80 ? -INFINITY : INFINITY) << i;
      } else {
        EXPECT_EQ(wide[i],
                  decodeFloat8(i, f.exponentBits, f.mantissaBits, f.bias))
            << i;
        EXPECT_EQ(std::signbit(wide[i]), i >= 0x80) << i;
      }
    }
    // And back: every non-NaN pattern survives the round trip.
    std::vector<uint8_t> back(256);
    ASSERT_TRUE(
        castElements(DType::F64, wide.data(), f.dtype, back.data(), 256));
    for (int i = 0; i < 256; ++i) {
      if (!std::isnan(wide[i])) {
        EXPECT_EQ(back[i], i) << i;
      }
    }
  }
  std::vector<uint8_t> scales = {0, 1, 127, 254, 255};
  std::vector<float> values(5);
  ASSERT_TRUE(
      castElements(DType::F8E8M0, scales.data(), DType::F32, values.data(), 5));
  EXPECT_EQ(values[0], std::ldexp(1.0f, -127));
  EXPECT_EQ(values[1], std::ldexp(1.0f, -126));
  EXPECT_EQ(values[2], 1.0f);
  EXPECT_EQ(values[3], std::ldexp(1.0f, 127));
  EXPECT_EQ(bitsOf(values[4]), 0x7FC00000u);
  // PyTorch's float32 bits for e4m3fn NaN; the payload is kept.
  uint8_t nans[] = {0x7F, 0xFF};
  float f32[2];
  ASSERT_TRUE(castElements(DType::F8E4M3, nans, DType::F32, f32, 2));
  EXPECT_EQ(bitsOf(f32[0]), 0x7FF00000u);
  EXPECT_EQ(bitsOf(f32[1]), 0xFFF00000u);
}

TEST(Float8Cast, WideSourcesRoundToFloat32FirstAsPyTorch) {
  // 17/16 + 2^-40 is 17/16 in float32, a tie that e4m3fn rounds to 1.0; a
  // single rounding would give 1.125 (0x39).
  double near = 1.0625 + std::ldexp(1.0, -40);
  uint8_t e4m3 = 0;
  ASSERT_TRUE(castElements(DType::F64, &near, DType::F8E4M3, &e4m3, 1));
  EXPECT_EQ(e4m3, 0x38);
  // int64 465 to e4m3fn: past 464, NaN; 2^24 + 1 rounds to 2^24 in float32.
  int64_t ints[] = {465, 464, -465, (int64_t(1) << 24) + 1};
  uint8_t out[4];
  ASSERT_TRUE(castElements(DType::I64, ints, DType::F8E4M3, out, 4));
  EXPECT_EQ(std::vector<int>(out, out + 4),
            (std::vector<int>{0x7F, 0x7E, 0xFF, 0x7F}));
  uint64_t big = UINT64_MAX;
  ASSERT_TRUE(castElements(DType::U64, &big, DType::F8E5M2, out, 1));
  EXPECT_EQ(out[0], 0x7C); // 2^64: Inf
}

TEST(Float8Cast, ToIntegersAreChecked) {
  uint8_t values[] = {0xB8, 0x3F, 0x7E}; // -1.0, 1.875, 448
  int8_t i8[3];
  Status status = castElements(DType::F8E4M3, values, DType::I8, i8, 3);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message,
            "cannot cast float8_e4m3fn to int8: element 2 is NaN, infinite "
            "or outside int8's range");
  EXPECT_EQ(i8[0], -1);
  EXPECT_EQ(i8[1], 1);
  uint8_t nan = 0x7F;
  int32_t i32;
  EXPECT_FALSE(castElements(DType::F8E4M3, &nan, DType::I32, &i32, 1));
  uint8_t flags[2];
  uint8_t scales[] = {0x00, 0xFF}; // 2^-127 and NaN: both true
  ASSERT_TRUE(castElements(DType::F8E8M0, scales, DType::Bool, flags, 2));
  EXPECT_EQ(flags[0], 1);
  EXPECT_EQ(flags[1], 1);
}

TEST(UnsignedCast, RangesAreChecked) {
  uint64_t u64[] = {0, uint64_t(1) << 63, UINT64_MAX};
  int64_t i64[3];
  Status status = castElements(DType::U64, u64, DType::I64, i64, 3);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message,
            "cannot cast uint64 to int64: element 1 does not fit int64");
  int64_t negative[] = {5, INT64_MAX, -1};
  uint64_t back[3];
  status = castElements(DType::I64, negative, DType::U64, back, 3);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message, HasSubstr("element 2 does not fit"));
  EXPECT_EQ(back[1], uint64_t(INT64_MAX));
  uint32_t u32[] = {65535, 65536};
  uint16_t u16[2];
  status = castElements(DType::U32, u32, DType::U16, u16, 2);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message, HasSubstr("element 1 does not fit"));
  uint16_t halves[] = {32767, 40000};
  int16_t i16[2];
  EXPECT_FALSE(castElements(DType::U16, halves, DType::I16, i16, 2));
  uint8_t bytes[] = {0, 255};
  uint16_t wide[2];
  ASSERT_TRUE(castElements(DType::U8, bytes, DType::U16, wide, 2));
  EXPECT_EQ(wide[1], 255);
  EXPECT_FALSE(castMayFail(DType::U8, DType::U16));
  EXPECT_FALSE(castMayFail(DType::U32, DType::I64));
  EXPECT_FALSE(castMayFail(DType::U32, DType::U64));
  EXPECT_TRUE(castMayFail(DType::U32, DType::I32));
  EXPECT_TRUE(castMayFail(DType::U64, DType::I64));
  EXPECT_TRUE(castMayFail(DType::I64, DType::U64));
  EXPECT_TRUE(castMayFail(DType::I8, DType::U64));
  EXPECT_TRUE(castMayFail(DType::F8E5M2, DType::U16));
}

TEST(UnsignedCast, FloatsAndUint64) {
  // 2^64 - 1 to float32 is 2^64; 2^53 + 2^29 + 1 rounds once to 2^53 + 2^30.
  uint64_t u64[] = {UINT64_MAX, (uint64_t(1) << 53) + (uint64_t(1) << 29) + 1};
  float f32[2];
  ASSERT_TRUE(castElements(DType::U64, u64, DType::F32, f32, 2));
  EXPECT_EQ(bitsOf(f32[0]), 0x5F800000u);
  EXPECT_EQ(bitsOf(f32[1]), 0x5A000001u);
  // float64 to uint64: (-1, 2^64) truncates; -1 and 2^64 do not fit.
  double doubles[] = {-0.5, 18446744073709549568.0, 3.9};
  uint64_t out[3];
  ASSERT_TRUE(castElements(DType::F64, doubles, DType::U64, out, 3));
  EXPECT_EQ(out[0], 0u);
  EXPECT_EQ(out[1], 18446744073709549568ull);
  EXPECT_EQ(out[2], 3u);
  double bad[] = {1.0, 18446744073709551616.0};
  EXPECT_FALSE(castElements(DType::F64, bad, DType::U64, out, 2));
  double minusOne = -1.0;
  uint32_t u32;
  EXPECT_FALSE(castElements(DType::F64, &minusOne, DType::U32, &u32, 1));
  float edge = 4294967040.0f; // the largest float below 2^32
  ASSERT_TRUE(castElements(DType::F32, &edge, DType::U32, &u32, 1));
  EXPECT_EQ(u32, 4294967040u);
}

TEST(OpaqueDTypes, AreMovedNeverCast) {
  for (DType opaque : {DType::F8E4M3Fnuz, DType::F8E5M2Fnuz, DType::C64}) {
    EXPECT_FALSE(isCastableDType(opaque));
    EXPECT_TRUE(isCastSupported(opaque, opaque));
    EXPECT_FALSE(isCastSupported(opaque, DType::F32));
    EXPECT_FALSE(isCastSupported(DType::U8, opaque));
  }
  uint64_t complex[] = {0x3F80000040000000ull, 0x7FC0000000000001ull};
  uint64_t copy[2];
  ASSERT_TRUE(castElements(DType::C64, complex, DType::C64, copy, 2));
  EXPECT_EQ(copy[1], complex[1]);
  float f32[4];
  Status status = castElements(DType::C64, complex, DType::F32, f32, 2);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message,
            "cannot cast complex64 to float32: complex64 is only moved, "
            "never cast");
  uint8_t fnuz = 0x80;
  uint8_t e4m3;
  EXPECT_FALSE(castElements(DType::F8E4M3Fnuz, &fnuz, DType::F8E4M3, &e4m3, 1));
}

TEST(DTypeNames, EveryDTypeHasItsSpellings) {
  const char *names[][2] = {{"float64", "F64"},
                            {"float32", "F32"},
                            {"float16", "F16"},
                            {"bfloat16", "BF16"},
                            {"int64", "I64"},
                            {"int32", "I32"},
                            {"int16", "I16"},
                            {"int8", "I8"},
                            {"uint8", "U8"},
                            {"bool", "BOOL"},
                            {"uint64", "U64"},
                            {"uint32", "U32"},
                            {"uint16", "U16"},
                            {"float8_e4m3fn", "F8_E4M3"},
                            {"float8_e5m2", "F8_E5M2"},
                            {"float8_e8m0fnu", "F8_E8M0"},
                            {"float8_e4m3fnuz", "F8_E4M3FNUZ"},
                            {"float8_e5m2fnuz", "F8_E5M2FNUZ"},
                            {"complex64", "C64"}};
  ASSERT_EQ(std::size(names), std::size(kAllDTypes));
  size_t bytes[] = {8, 4, 2, 2, 8, 4, 2, 1, 1, 1, 8, 4, 2, 1, 1, 1, 1, 1, 8};
  for (size_t i = 0; i < std::size(kAllDTypes); ++i) {
    DType d = kAllDTypes[i];
    EXPECT_EQ(dtypeName(d), names[i][0]);
    EXPECT_EQ(safetensorsDTypeName(d), names[i][1]);
    EXPECT_EQ(parseDTypeName(names[i][0]), d);
    EXPECT_EQ(parseSafetensorsDTypeName(names[i][1]), d);
    EXPECT_EQ(dtypeSize(d), bytes[i]) << names[i][0];
    EXPECT_THAT(std::string(allDTypeNames()), HasSubstr(names[i][0]));
  }
  EXPECT_EQ(subByteDTypeBits("F4"), 4u);
  EXPECT_EQ(subByteDTypeBits("F6_E2M3"), 6u);
  EXPECT_EQ(subByteDTypeBits("F6_E3M2"), 6u);
  EXPECT_EQ(subByteDTypeBitsByName("float4_e2m1fn"), 4u);
  EXPECT_EQ(subByteDTypeBits("F8_E4M3"), std::nullopt);
  EXPECT_EQ(parseSafetensorsDTypeName("F4"), std::nullopt);
}

} // namespace
