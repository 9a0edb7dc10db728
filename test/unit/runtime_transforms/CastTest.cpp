//===- CastTest.cpp - Float conversions against an independent reference --===//
//
// The library converts with bit manipulation and float arithmetic tricks.
// The reference here decodes with ldexp and rounds in long double by
// scaling to the target's quantum, splitting off the fraction with floor and
// applying ties-to-even by hand, so agreement is evidence, not a tautology.
//
// 16-bit formats are checked exhaustively (all 65536 patterns, both ways);
// float and double inputs at random and at the hard places: exact ties
// between neighbouring results, one ulp either side of them, the subnormal
// range, the overflow threshold, Inf and NaN payloads.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/FloatConversion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace aoa;
using namespace aoa::runtime;
using ::testing::HasSubstr;

namespace {

/// An IEEE binary interchange format.
struct Format {
  int exponentBits;
  int mantissaBits;
  const char *name;

  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  uint64_t exponentMask() const { return (uint64_t(1) << exponentBits) - 1; }
  uint64_t signBit() const {
    return uint64_t(1) << (exponentBits + mantissaBits);
  }
  uint64_t quietBit() const { return uint64_t(1) << (mantissaBits - 1); }
  bool isNaN(uint64_t bits) const {
    return ((bits >> mantissaBits) & exponentMask()) == exponentMask() &&
           (bits & ((uint64_t(1) << mantissaBits) - 1)) != 0;
  }
};

constexpr Format kHalf{5, 10, "float16"};
constexpr Format kBFloat16{8, 7, "bfloat16"};
constexpr Format kFloat{8, 23, "float32"};

/// The value of `bits` in `format` (NaN for NaNs).
long double referenceDecode(uint64_t bits, Format format) {
  bool negative = bits & format.signBit();
  uint64_t exponent = (bits >> format.mantissaBits) & format.exponentMask();
  uint64_t mantissa = bits & ((uint64_t(1) << format.mantissaBits) - 1);
  long double magnitude;
  if (exponent == format.exponentMask())
    magnitude = mantissa ? NAN : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp((long double)mantissa,
                           1 - format.bias() - format.mantissaBits);
  else
    magnitude = std::ldexp(
        (long double)(mantissa | (uint64_t(1) << format.mantissaBits)),
        int(exponent) - format.bias() - format.mantissaBits);
  return negative ? -magnitude : magnitude;
}

/// The bits of `x` (not NaN) rounded to nearest even in `format`.
uint64_t referenceEncode(long double x, Format format) {
  uint64_t sign = std::signbit(x) ? format.signBit() : 0;
  long double a = std::fabs(x);
  uint64_t infinity = format.exponentMask() << format.mantissaBits;
  if (std::isinf(a))
    return sign | infinity;
  if (a == 0)
    return sign;
  int minExponent = 1 - format.bias();
  int e;
  std::frexp(a, &e); // a = f * 2^e with f in [0.5, 1)
  e -= 1;            // 2^e <= a < 2^(e+1)
  // The format's spacing at a is 2^q; count in units of it.
  int q = std::max(e, minExponent) - format.mantissaBits;
  long double scaled = std::ldexp(a, -q);
  long double whole = std::floor(scaled);
  long double fraction = scaled - whole;
  uint64_t n = uint64_t(whole);
  if (fraction > 0.5L || (fraction == 0.5L && (n & 1)))
    ++n;
  uint64_t hidden = uint64_t(1) << format.mantissaBits;
  if (e < minExponent) // subnormal; n == hidden is the smallest normal
    return sign | n;
  if (n == 2 * hidden) { // the rounding carried into the next binade
    n = hidden;
    ++e;
  }
  uint64_t biased = uint64_t(e + format.bias());
  if (biased >= format.exponentMask())
    return sign | infinity;
  return sign | (biased << format.mantissaBits) | (n - hidden);
}

/// Checks that `actual` (bits in `format`) is `x` correctly rounded; a NaN
/// must give a quiet NaN of the same sign.
void expectRounded(long double x, uint64_t actual, Format format,
                   const char *what) {
  if (std::isnan(x)) {
    EXPECT_TRUE(format.isNaN(actual)) << what << ": NaN became " << actual;
    EXPECT_TRUE(actual & format.quietBit()) << what << ": NaN not quiet";
    EXPECT_EQ(bool(actual & format.signBit()), bool(std::signbit(x))) << what;
    return;
  }
  uint64_t expected = referenceEncode(x, format);
  EXPECT_EQ(actual, expected)
      << what << " of " << std::hexfloat << (double)x << " to " << format.name;
}

TEST(CastReference, AgreesWithTheHardwareForDoubleToFloat) {
  // A check of the reference itself against static_cast (IEEE hardware).
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    double x = doubleFromBits(rng());
    if (std::isnan(x))
      continue;
    ASSERT_EQ(referenceEncode(x, kFloat), floatBits(static_cast<float>(x)))
        << std::hexfloat << x;
  }
}

/// All 65536 patterns of a 16-bit format.
std::vector<uint16_t> allSixteenBitPatterns() {
  std::vector<uint16_t> all(65536);
  for (uint32_t bits = 0; bits < 65536; ++bits)
    all[bits] = uint16_t(bits);
  return all;
}

/// Every pattern of a 16-bit `dtype` widened to float (by `scalar` and in
/// bulk) and to double: numbers exactly; NaNs with their sign and their
/// payload moved up with the mantissa, made quiet unless `keepsSignalling`
/// (bfloat16 -> float is a plain shift, as in Paddle and PyTorch).
void expectExactWidening(DType dtype, Format format,
                         float (*scalar)(uint16_t), bool keepsSignalling) {
  std::vector<uint16_t> all = allSixteenBitPatterns();
  std::vector<float> floats(65536);
  std::vector<double> doubles(65536);
  ASSERT_TRUE(
      castElements(dtype, all.data(), DType::F32, floats.data(), all.size()));
  ASSERT_TRUE(
      castElements(dtype, all.data(), DType::F64, doubles.data(), all.size()));
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    long double expected = referenceDecode(bits, format);
    float value = scalar(uint16_t(bits));
    ASSERT_EQ(floatBits(value), floatBits(floats[bits])) << bits;
    if (std::isnan(expected)) {
      uint32_t sign = bits & format.signBit() ? 0x80000000u : 0u;
      uint32_t mantissa = bits & ((1u << format.mantissaBits) - 1);
      uint32_t payload = keepsSignalling ? mantissa
                                         : mantissa | format.quietBit();
      uint32_t widenedNaN =
          sign | 0x7F800000u | (payload << (23 - format.mantissaBits));
      ASSERT_EQ(floatBits(value), widenedNaN) << bits;
      ASSERT_TRUE(std::isnan(doubles[bits])) << bits;
      ASSERT_EQ(bool(doubleBits(doubles[bits]) >> 63), bool(sign)) << bits;
      continue;
    }
    ASSERT_EQ(floatBits(value), floatBits(float(expected))) << bits;
    ASSERT_EQ(doubleBits(doubles[bits]), doubleBits(double(expected))) << bits;
  }
}

TEST(Cast, SixteenBitToWiderIsExactForAllPatterns) {
  expectExactWidening(DType::F16, kHalf, halfToFloat, false);
  expectExactWidening(DType::BF16, kBFloat16, bfloat16ToFloat, true);
}

/// Every 16-bit pattern of `dtype` through `wide` and back: numbers come
/// back unchanged, NaNs come back as the quiet NaN with the same payload.
void expectRoundTripsThrough(DType dtype, DType wide, Format format) {
  std::vector<uint16_t> all = allSixteenBitPatterns(), back(65536);
  std::vector<unsigned char> widened(65536 * dtypeSize(wide));
  ASSERT_TRUE(castElements(dtype, all.data(), wide, widened.data(), 65536));
  ASSERT_TRUE(castElements(wide, widened.data(), dtype, back.data(), 65536));
  for (uint32_t h = 0; h < 65536; ++h) {
    uint32_t expected = format.isNaN(h) ? h | uint32_t(format.quietBit()) : h;
    ASSERT_EQ(back[h], expected)
        << format.name << " through " << dtypeName(wide) << ": " << h;
  }
}

TEST(Cast, SixteenBitPatternsRoundTripExactly) {
  expectRoundTripsThrough(DType::F16, DType::F32, kHalf);
  expectRoundTripsThrough(DType::F16, DType::F64, kHalf);
  expectRoundTripsThrough(DType::BF16, DType::F32, kBFloat16);
  expectRoundTripsThrough(DType::BF16, DType::F64, kBFloat16);
}

TEST(Cast, HalfAndBFloat16ConvertAllPatternsCorrectly) {
  std::vector<uint16_t> all = allSixteenBitPatterns(), halves(65536),
                        brains(65536);
  ASSERT_TRUE(castElements(DType::F16, all.data(), DType::BF16, brains.data(),
                           all.size()));
  ASSERT_TRUE(castElements(DType::BF16, all.data(), DType::F16, halves.data(),
                           all.size()));
  for (uint32_t h = 0; h < 65536; ++h) {
    expectRounded(referenceDecode(h, kHalf), brains[h], kBFloat16,
                  "float16 -> bfloat16");
    expectRounded(referenceDecode(h, kBFloat16), halves[h], kHalf,
                  "bfloat16 -> float16");
  }
}

/// Values at which rounding to `format` is hardest, as long doubles: for
/// every pair of neighbouring finite values of the format, their midpoint
/// (a tie) and the values `nudge` units of the input's precision either
/// side of it, plus the largest value and the overflow threshold.
template <typename Input>
std::vector<Input> hardCases(Format format, int inputMantissaBits) {
  std::vector<Input> cases;
  uint64_t patterns = uint64_t(1)
                      << (format.exponentBits + format.mantissaBits);
  for (uint64_t bits = 0; bits < patterns; ++bits) {
    long double low = referenceDecode(bits, format);
    long double high = referenceDecode(bits + 1, format);
    if (std::isnan(low) || std::isinf(low) || std::isnan(high))
      continue;
    if (std::isinf(high)) // above the largest: the overflow threshold
      high = low + (low - referenceDecode(bits - 1, format));
    long double mid = (low + high) / 2;
    int e;
    std::frexp(mid, &e);
    long double ulp = std::ldexp(1.0L, e - 1 - inputMantissaBits);
    for (long double x : {low, mid, mid - ulp, mid + ulp, high - ulp})
      for (long double sign : {1.0L, -1.0L})
        cases.push_back(Input(sign * x));
  }
  return cases;
}

/// Random inputs: uniformly random bit patterns (every exponent, NaN
/// payloads, Inf, subnormals), then random mantissas with exponents near
/// the target's range.
template <typename Input, typename Bits>
std::vector<Input> randomCases(std::mt19937_64 &rng, size_t count,
                               Input (*fromBits)(Bits)) {
  std::vector<Input> cases;
  for (size_t i = 0; i < count; ++i)
    cases.push_back(fromBits(Bits(rng())));
  std::uniform_int_distribution<int> exponent(-150, 130);
  for (size_t i = 0; i < count; ++i) {
    Input mantissa = Input(1) + Input(rng() % (uint64_t(1) << 52)) /
                                    Input(uint64_t(1) << 52);
    Input value = std::ldexp(mantissa, exponent(rng));
    cases.push_back(rng() % 2 ? value : -value);
  }
  for (Input special : {Input(0), -Input(0), Input(INFINITY), -Input(INFINITY),
                        Input(NAN), -Input(NAN)})
    cases.push_back(special);
  return cases;
}

/// Converts `inputs` to `to` in bulk and each one on its own, and checks
/// both against the reference.
template <typename Input>
void expectCorrectlyRounded(const std::vector<Input> &inputs, DType from,
                            DType to, Format format, const char *what) {
  std::vector<unsigned char> out(inputs.size() * dtypeSize(to));
  ASSERT_TRUE(castElements(from, inputs.data(), to, out.data(), inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, out.data() + i * dtypeSize(to), dtypeSize(to));
    expectRounded((long double)inputs[i], bits, format, what);
    if (::testing::Test::HasFailure())
      return; // one report is enough
  }
}

TEST(Cast, FloatToHalfAndBFloat16) {
  std::mt19937_64 rng(2);
  std::vector<float> random =
      randomCases<float, uint32_t>(rng, 200000, floatFromBits);
  expectCorrectlyRounded(random, DType::F32, DType::F16, kHalf, "random");
  expectCorrectlyRounded(random, DType::F32, DType::BF16, kBFloat16, "random");
  expectCorrectlyRounded(hardCases<float>(kHalf, 23), DType::F32, DType::F16,
                         kHalf, "tie");
  expectCorrectlyRounded(hardCases<float>(kBFloat16, 23), DType::F32,
                         DType::BF16, kBFloat16, "tie");
}

TEST(Cast, DoubleToEveryNarrowerFormat) {
  std::mt19937_64 rng(3);
  std::vector<double> random =
      randomCases<double, uint64_t>(rng, 200000, doubleFromBits);
  expectCorrectlyRounded(random, DType::F64, DType::F32, kFloat, "random");
  expectCorrectlyRounded(random, DType::F64, DType::F16, kHalf, "random");
  expectCorrectlyRounded(random, DType::F64, DType::BF16, kBFloat16, "random");
  // Ties and one double ulp beside them: going through float first would
  // turn "just above a tie" into a tie and round it the wrong way.
  expectCorrectlyRounded(hardCases<double>(kHalf, 52), DType::F64, DType::F16,
                         kHalf, "tie");
  expectCorrectlyRounded(hardCases<double>(kBFloat16, 52), DType::F64,
                         DType::BF16, kBFloat16, "tie");
}

TEST(Cast, DoubleRoundingIsAvoided) {
  // 1 + 2^-11 + 2^-40 lies just above the tie between float16 1 and its
  // successor 1 + 2^-10, so it rounds up; as a float it is exactly the tie
  // and would round down to even.
  double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(doubleToHalf(x), 0x3C01u);
  EXPECT_EQ(floatToHalf(float(x)), 0x3C00u);
  // The same for bfloat16: 1 + 2^-8 + 2^-40.
  double y = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(doubleToBFloat16(y), 0x3F81u);
  EXPECT_EQ(floatToBFloat16(float(y)), 0x3F80u);
}

TEST(Cast, SpecialValues) {
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFFu);
  EXPECT_EQ(floatToHalf(65519.99f), 0x7BFFu);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00u); // ties to even: overflow
  EXPECT_EQ(floatToHalf(-1e10f), 0xFC00u);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000u);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001u); // smallest
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000u); // tie to even 0
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001u);
  EXPECT_EQ(floatToBFloat16(3.0e38f), 0x7F62u);
  EXPECT_EQ(floatToBFloat16(3.4e38f), 0x7F80u); // rounds up past the max
  EXPECT_EQ(floatToBFloat16(-INFINITY), 0xFF80u);
  EXPECT_EQ(floatToBFloat16(std::ldexp(1.0f, -149)), 0x0000u);
  EXPECT_EQ(doubleToHalf(1e300), 0x7C00u);
  EXPECT_EQ(doubleToHalf(-1e-300), 0x8000u);
  EXPECT_EQ(doubleToBFloat16(1e300), 0x7F80u);
  EXPECT_EQ(doubleToBFloat16(1e-300), 0x0000u);
  // A signalling NaN with payload bits comes out quiet, payload kept.
  float signalling = floatFromBits(0xFF812345u);
  EXPECT_EQ(floatToHalf(signalling), 0xFE00u | ((0x012345u >> 13) & 0x3FFu));
  EXPECT_EQ(floatToBFloat16(signalling), 0xFFC1u);
  EXPECT_EQ(floatBits(halfToFloat(0x7C01u)), 0x7FC02000u);
  EXPECT_EQ(floatBits(bfloat16ToFloat(0xFF81u)), 0xFF810000u);
}

TEST(Cast, IdentityCopiesKeepEveryBit) {
  std::mt19937_64 rng(4);
  for (DType dtype : kAllDTypes) {
    std::vector<unsigned char> in(64 * dtypeSize(dtype)), out(in.size());
    for (unsigned char &c : in)
      c = static_cast<unsigned char>(rng());
    ASSERT_TRUE(castElements(dtype, in.data(), dtype, out.data(), 64));
    EXPECT_EQ(in, out) << dtypeName(dtype);
    // In place is a no-op.
    ASSERT_TRUE(castElements(dtype, in.data(), dtype, in.data(), 64));
    EXPECT_EQ(in, out);
  }
  // Signalling NaNs stay signalling under a copy (it is not a conversion).
  uint32_t signalling = 0x7F800001u, copy = 0;
  ASSERT_TRUE(castElements(DType::F32, &signalling, DType::F32, &copy, 1));
  EXPECT_EQ(copy, signalling);
}

TEST(Cast, UnalignedAndInPlace) {
  // Elements at odd addresses.
  std::vector<unsigned char> in(1 + 3 * 4), out(1 + 3 * 2);
  float values[] = {1.0f, -2.5f, 65504.0f};
  std::memcpy(in.data() + 1, values, sizeof(values));
  ASSERT_TRUE(
      castElements(DType::F32, in.data() + 1, DType::F16, out.data() + 1, 3));
  uint16_t halves[3];
  std::memcpy(halves, out.data() + 1, sizeof(halves));
  EXPECT_EQ(halves[0], 0x3C00u);
  EXPECT_EQ(halves[1], 0xC100u);
  EXPECT_EQ(halves[2], 0x7BFFu);
  // Equal sizes may convert in place.
  uint16_t buffer[2] = {0x3C00u, 0xC000u}; // float16 1, -2
  ASSERT_TRUE(castElements(DType::F16, buffer, DType::BF16, buffer, 2));
  EXPECT_EQ(buffer[0], 0x3F80u);
  EXPECT_EQ(buffer[1], 0xC000u);
}

/// Bits of a float32 value.
static uint32_t f32Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

TEST(Cast, IntegersToFloatsRoundOnce) {
  // Expected values derived by hand: float32 keeps 24 bits.
  int64_t wide[] = {
      (int64_t(1) << 24) + 1,                        // tie: to even, 2^24
      (int64_t(1) << 24) + 3,                        // tie: to even, 2^24 + 4
      (int64_t(1) << 53) + (int64_t(1) << 29) + 1,   // via double: 2^53 (twice
                                                     // rounded); once: 2^53+2^30
      -((int64_t(1) << 53) + (int64_t(1) << 29) + 1),
      (int64_t(1) << 53) + (int64_t(1) << 29),       // exact tie: to even, 2^53
      INT64_MAX,                                     // 2^63
      INT64_MIN};                                    // -2^63
  float narrow[7];
  ASSERT_TRUE(castElements(DType::I64, wide, DType::F32, narrow, 7));
  EXPECT_EQ(f32Bits(narrow[0]), 0x4B800000u); // 2^24
  EXPECT_EQ(f32Bits(narrow[1]), 0x4B800002u); // 2^24 + 4
  EXPECT_EQ(f32Bits(narrow[2]), 0x5A000001u); // 2^53 + 2^30
  EXPECT_EQ(f32Bits(narrow[3]), 0xDA000001u);
  EXPECT_EQ(f32Bits(narrow[4]), 0x5A000000u); // 2^53
  EXPECT_EQ(f32Bits(narrow[5]), 0x5F000000u); // 2^63
  EXPECT_EQ(f32Bits(narrow[6]), 0xDF000000u);
  // float16: 2049 is a tie between 2048 and 2050 (to even: 2048), 65519
  // rounds down to 65504, 65520 is the tie to Inf; int64 2^53+2^42+1 to
  // bfloat16 (8 bits): once rounded 2^53 + 2^46, not the double-rounded 2^53.
  int64_t halves[] = {2049, 2051, 65519, 65520,
                      (int64_t(1) << 53) + (int64_t(1) << 45) + 1};
  uint16_t f16[5], bf16[5];
  ASSERT_TRUE(castElements(DType::I64, halves, DType::F16, f16, 5));
  EXPECT_EQ(f16[0], 0x6800u); // 2048
  EXPECT_EQ(f16[1], 0x6802u); // 2052
  EXPECT_EQ(f16[2], 0x7BFFu); // 65504
  EXPECT_EQ(f16[3], 0x7C00u); // Inf
  ASSERT_TRUE(castElements(DType::I64, halves, DType::BF16, bf16, 5));
  EXPECT_EQ(bf16[4], 0x5A01u); // 2^53 + 2^46
  double doubles[1];
  int64_t odd[] = {(int64_t(1) << 53) + 1};
  ASSERT_TRUE(castElements(DType::I64, odd, DType::F64, doubles, 1));
  EXPECT_EQ(doubles[0], 9007199254740992.0);
}

TEST(Cast, FloatsToIntegersTruncateOrFail) {
  float values[] = {1.9f, -1.9f, 127.99f, -128.99f, -0.5f, -0.0f};
  int8_t i8[6];
  ASSERT_TRUE(castElements(DType::F32, values, DType::I8, i8, 6));
  EXPECT_EQ(std::vector<int>(i8, i8 + 6), (std::vector<int>{1, -1, 127, -128,
                                                              0, 0}));
  uint8_t u8[6];
  ASSERT_TRUE(castElements(DType::F32, values, DType::Bool, u8, 6));
  EXPECT_EQ(std::vector<int>(u8, u8 + 6),
            (std::vector<int>{1, 1, 1, 1, 1, 0})); // -0.0 is false
  float bad[] = {1.0f, 128.0f, std::nanf(""), -129.0f};
  Status status = castElements(DType::F32, bad, DType::I8, i8, 4);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().toString(),
            "cannot cast float32 to int8: element 1 is NaN, infinite or "
            "outside int8's range\nhint: fix the source data, or cast to a "
            "dtype that holds it; casts never wrap or saturate");
  // int64's edges: -2^63 fits, 2^63 does not.
  double edges[] = {-9223372036854775808.0, 9223372036854775808.0};
  int64_t i64[2];
  status = castElements(DType::F64, edges, DType::I64, i64, 2);
  ASSERT_FALSE(status);
  EXPECT_EQ(i64[0], INT64_MIN);
  EXPECT_THAT(status.error().message, HasSubstr("element 1 "));
  float nan = std::nanf("");
  uint8_t flag = 0;
  ASSERT_TRUE(castElements(DType::F32, &nan, DType::Bool, &flag, 1));
  EXPECT_EQ(flag, 1);
}

TEST(Cast, IntegerNarrowingFailsWhereItDoesNotFit) {
  int32_t ints[] = {0, 255, -1, 256};
  uint8_t u8[4];
  Status status = castElements(DType::I32, ints, DType::U8, u8, 4);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message,
            "cannot cast int32 to uint8: element 2 does not fit uint8");
  uint8_t bytes[] = {0, 200, 255};
  int8_t i8[3];
  EXPECT_FALSE(castElements(DType::U8, bytes, DType::I8, i8, 3));
  int16_t i16[3];
  ASSERT_TRUE(castElements(DType::U8, bytes, DType::I16, i16, 3));
  EXPECT_EQ(i16[1], 200);
  uint8_t flags[] = {0, 1, 1};
  int64_t i64[3];
  ASSERT_TRUE(castElements(DType::Bool, flags, DType::I64, i64, 3));
  EXPECT_EQ(i64[2], 1);
  EXPECT_TRUE(castMayFail(DType::I16, DType::U8));
  EXPECT_TRUE(castMayFail(DType::U8, DType::I8));
  EXPECT_FALSE(castMayFail(DType::U8, DType::I16));
  EXPECT_FALSE(castMayFail(DType::I64, DType::F16)); // overflow is Inf
  EXPECT_TRUE(isCastSupported(DType::I8, DType::U8));
}

} // namespace
