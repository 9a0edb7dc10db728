//===- FastCastIntegersTest.cpp - Integer casts against the reference -----===//
//
// castElements runs the casts with an integer or bool side through vector
// loops (runtime/transforms/lib/FastCastIntegers.h). These tests compare
// their bits, and the first element they report without a result, with the
// element conversion (CastElement::convertChecked): for every pair of
// castable dtypes with an integer or bool side, every input of the 8- and
// 16-bit sources, and for the 32- and 64-bit ones the range edges of every
// target (each +-2, powers of two around them) and many random patterns;
// then float32 (float16, bfloat16) to 64-bit integers with special values
// at every lane of a vector; failures deep in a run, in a streamed (large)
// destination, in place, and inside a region copy; and transposes fused
// with an integer cast.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/Box.h"
#include "aoa/ir/Permutation.h"
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/RegionCopy.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace aoa;
using namespace aoa::runtime;

namespace {

constexpr DType kCastableDTypes[] = {
    DType::I64,  DType::I32,    DType::I16,    DType::I8,
    DType::U64,  DType::U32,    DType::U16,    DType::U8,
    DType::Bool, DType::F64,    DType::F32,    DType::F16,
    DType::BF16, DType::F8E4M3, DType::F8E5M2, DType::F8E8M0};

bool isIntegerOrBool(DType d) {
  return isIntegerElement(d) || d == DType::Bool;
}

template <typename T> void append(std::vector<unsigned char> &bytes, T value) {
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  bytes.insert(bytes.end(), raw, raw + sizeof(T));
}

/// Values around every integer dtype's range ends and around the powers of
/// two (each -2 .. +2), as doubles; the caller keeps those its type holds.
std::vector<double> edgeValues() {
  std::vector<double> edges = {0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1.5, -1.5};
  for (DType d : kCastableDTypes)
    if (isIntegerOrBool(d)) {
      edges.push_back(double(integerMin(d)));
      edges.push_back(double(integerMax(d)));
    }
  for (int exponent = 0; exponent <= 64; ++exponent) {
    edges.push_back(std::ldexp(1.0, exponent));
    edges.push_back(-std::ldexp(1.0, exponent));
  }
  return edges;
}

/// Inputs of a 4- or 8-byte dtype: the edge values (and, as integers,
/// their neighbours; as floats, the next floats either way), the special
/// floats, then random bit patterns and random small values.
template <typename T> std::vector<unsigned char> wideInputs(uint64_t seed) {
  std::vector<unsigned char> bytes;
  for (double edge : edgeValues()) {
    if constexpr (std::is_integral_v<T>) {
      long double wide = edge;
      if (wide < (long double)std::numeric_limits<T>::min() - 2 ||
          wide > (long double)std::numeric_limits<T>::max() + 2.0L)
        continue;
      for (int delta = -2; delta <= 2; ++delta) {
        long double near = std::floor(wide) + delta;
        if (near >= (long double)std::numeric_limits<T>::min() &&
            near <= (long double)std::numeric_limits<T>::max())
          append(bytes, static_cast<T>(near));
      }
    } else {
      T value = static_cast<T>(edge);
      T inf = std::numeric_limits<T>::infinity();
      append(bytes, value);
      append(bytes, std::nextafter(value, inf));
      append(bytes, std::nextafter(value, -inf));
    }
  }
  if constexpr (!std::is_integral_v<T>) {
    for (T special :
         {std::numeric_limits<T>::infinity(),
          -std::numeric_limits<T>::infinity(),
          std::numeric_limits<T>::quiet_NaN(),
          -std::numeric_limits<T>::quiet_NaN(),
          std::numeric_limits<T>::denorm_min(),
          -std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max(),
          std::numeric_limits<T>::lowest()})
      append(bytes, special);
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = rng();
    unsigned char raw[8];
    std::memcpy(raw, &bits, 8);
    bytes.insert(bytes.end(), raw, raw + sizeof(T));
  }
  std::uniform_int_distribution<int> small(-300, 70000);
  for (int i = 0; i < 20000; ++i)
    append(bytes, static_cast<T>(small(rng)));
  return bytes;
}

std::vector<unsigned char> inputsFor(DType from) {
  switch (dtypeSize(from)) {
  case 1: {
    std::vector<unsigned char> all(256);
    for (int i = 0; i < 256; ++i)
      all[i] = static_cast<unsigned char>(i);
    return all;
  }
  case 2: {
    std::vector<unsigned char> all;
    for (uint32_t i = 0; i < 65536; ++i)
      append(all, static_cast<uint16_t>(i));
    return all;
  }
  default:
    break;
  }
  switch (from) {
  case DType::I32:
    return wideInputs<int32_t>(1);
  case DType::U32:
    return wideInputs<uint32_t>(2);
  case DType::F32:
    return wideInputs<float>(3);
  case DType::I64:
    return wideInputs<int64_t>(4);
  case DType::U64:
    return wideInputs<uint64_t>(5);
  default:
    return wideInputs<double>(6);
  }
}

/// What castElements should give: the reference's bits, and the first
/// element without a result (kNoCastFailure when none).
template <DType From, DType To> struct Expected {
  std::vector<unsigned char> bytes;
  uint64_t firstFailure = kNoCastFailure;
};

template <DType From, DType To>
Expected<From, To> reference(const unsigned char *src, size_t count) {
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  Expected<From, To> expected;
  expected.bytes.resize(count * sizeof(Dst));
  for (size_t i = 0; i < count; ++i) {
    Src value;
    std::memcpy(&value, src + i * sizeof(Src), sizeof(Src));
    bool ok = true;
    Dst result = CastElement<From, To>::convertChecked(value, ok);
    if (!ok && expected.firstFailure == kNoCastFailure)
      expected.firstFailure = i;
    std::memcpy(expected.bytes.data() + i * sizeof(Dst), &result, sizeof(Dst));
  }
  return expected;
}

/// The failing element castElements reported ("element N"), or
/// kNoCastFailure for success, or a message for another error.
uint64_t reportedFailure(const Status &status, std::string &other) {
  if (status)
    return kNoCastFailure;
  const std::string &message = status.error().message;
  size_t at = message.find(": element ");
  if (at == std::string::npos) {
    other = message;
    return kNoCastFailure;
  }
  return std::stoull(message.substr(at + 10));
}

/// The first difference between castElements and the reference on
/// `count` elements at `src` (`dstOffset` bytes into the destination
/// buffer), as text; empty when they agree.
template <DType From, DType To>
std::string firstMismatch(const unsigned char *src, size_t count,
                          size_t dstOffset = 0) {
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  std::string pair =
      std::string(dtypeName(From)) + " -> " + std::string(dtypeName(To)) + ": ";
  Expected<From, To> expected = reference<From, To>(src, count);
  std::vector<unsigned char> out(count * sizeof(Dst) + dstOffset, 0xA5);
  std::string other;
  uint64_t failure = reportedFailure(
      castElements(From, src, To, out.data() + dstOffset, count), other);
  if (!other.empty())
    return pair + other;
  if (failure != expected.firstFailure)
    return pair + "first failure " + std::to_string(failure) +
           ", the reference's " + std::to_string(expected.firstFailure);
  for (size_t i = 0; i < count; ++i)
    if (std::memcmp(out.data() + dstOffset + i * sizeof(Dst),
                    expected.bytes.data() + i * sizeof(Dst),
                    sizeof(Dst)) != 0) {
      uint64_t in = 0, got = 0, want = 0;
      std::memcpy(&in, src + i * sizeof(Src), sizeof(Src));
      std::memcpy(&got, out.data() + dstOffset + i * sizeof(Dst), sizeof(Dst));
      std::memcpy(&want, expected.bytes.data() + i * sizeof(Dst), sizeof(Dst));
      char text[128];
      std::snprintf(text, sizeof(text),
                    "input 0x%llx (element %zu) gives 0x%llx, the reference "
                    "0x%llx",
                    (unsigned long long)in, i, (unsigned long long)got,
                    (unsigned long long)want);
      return pair + text;
    }
  return "";
}

/// Calls `body(FromTag, ToTag)` for every pair of different castable dtypes
/// with an integer or bool side.
template <typename Body> void forEachIntegerPair(Body &&body) {
  for (DType from : kCastableDTypes)
    for (DType to : kCastableDTypes)
      if (from != to && (isIntegerOrBool(from) || isIntegerOrBool(to)))
        withCastDTypes(from, to, body);
}

TEST(FastCastIntegers, EveryPairMatchesTheReference) {
  forEachIntegerPair([](auto fromTag, auto toTag) {
    constexpr DType from = decltype(fromTag)::value;
    constexpr DType to = decltype(toTag)::value;
    std::vector<unsigned char> inputs = inputsFor(from);
    size_t count = inputs.size() / dtypeSize(from);
    EXPECT_EQ((firstMismatch<from, to>(inputs.data(), count)), "");
  });
}

TEST(FastCastIntegers, InRangeValuesMatchTheReference) {
  // Values 0 .. 100 fit every integer dtype: no failure stops the
  // comparison at the first element, and every lane takes the normal path.
  forEachIntegerPair([](auto fromTag, auto toTag) {
    constexpr DType from = decltype(fromTag)::value;
    constexpr DType to = decltype(toTag)::value;
    std::vector<int32_t> values(5000);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = int32_t((i * 37) % 101);
    std::vector<unsigned char> inputs(values.size() * dtypeSize(from));
    ASSERT_TRUE(castElements(DType::I32, values.data(), from, inputs.data(),
                             values.size()));
    EXPECT_EQ((firstMismatch<from, to>(inputs.data(), values.size())), "");
    // An odd destination address.
    EXPECT_EQ((firstMismatch<from, to>(inputs.data(), 1001, 1)), "");
  });
}

/// `count` zeros of `dtype` (0 in every integer and float dtype but
/// float8_e8m0, which has no zero and gets 1.0) with `bad` at `at`.
template <typename T>
std::vector<unsigned char> zerosWith(size_t count, size_t at, T bad) {
  std::vector<T> values(count, T(0));
  values[at] = bad;
  std::vector<unsigned char> bytes(count * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(FastCastIntegers, FailuresDeepInARunAreFoundFirst) {
  // Past the first blocks, and (2.5 M int32 outputs: 10 MiB) in a
  // destination written with streaming stores, at an odd address too.
  for (size_t count : {size_t(3000), size_t(2500000)})
    for (size_t at : {size_t(0), size_t(511), size_t(512), size_t(2999)}) {
      SCOPED_TRACE(std::to_string(count) + " elements, failure at " +
                   std::to_string(at));
      std::vector<unsigned char> wide =
          zerosWith<int64_t>(count, at, int64_t(1) << 40);
      EXPECT_EQ((firstMismatch<DType::I64, DType::I32>(wide.data(), count)),
                "");
      EXPECT_EQ((firstMismatch<DType::I64, DType::I32>(wide.data(), count, 2)),
                "");
      std::vector<unsigned char> floats =
          zerosWith<float>(count, at, std::nanf(""));
      EXPECT_EQ((firstMismatch<DType::F32, DType::U8>(floats.data(), count)),
                "");
      std::vector<unsigned char> halves =
          zerosWith<uint16_t>(count, at, 0x7C00); // float16 infinity
      EXPECT_EQ((firstMismatch<DType::F16, DType::I32>(halves.data(), count)),
                "");
    }
}

TEST(FastCastIntegers, FloatsToWideIntegersTakeBothPaths) {
  // Float32 (and float16, bfloat16 widened in registers, FastCast.h) to
  // int64 and uint64 go 4 lanes at a time through 32-bit truncation when
  // every lane fits in int32, else lane by lane (FastCastIntegers.h). Small
  // values with fractions of both signs, and one or two special values in a
  // vector: NaN, the infinities, the int32 and int64 range edges and their
  // neighbours, values in int64's range but beyond int32's; at every lane of a
  // vector, in later blocks and in the last, partial vector.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> specials = {
      std::nanf(""),
      -std::nanf(""),
      inf,
      -inf,
      0x1p31f,
      -0x1p31f,
      std::nextafter(0x1p31f, 0.0f),
      std::nextafter(-0x1p31f, -inf),
      std::nextafter(-0x1p31f, 0.0f),
      -1.0f,
      std::nextafter(-1.0f, 0.0f),
      -0.0f,
      0x1p40f,
      -0x1p40f,
      0x1p63f,
      -0x1p63f,
      std::nextafter(0x1p63f, 0.0f),
      0x1p64f,
      std::nextafter(0x1p64f, 0.0f),
      std::numeric_limits<float>::max(),
      std::numeric_limits<float>::denorm_min()};
  constexpr size_t count = 1037; // 2 blocks, 8 lanes and 5
  std::vector<float> base(count);
  for (size_t i = 0; i < count; ++i)
    base[i] = (float(int(i * 7919 % 2001)) - 1000.0f) * 0.75f;
  std::vector<std::vector<float>> cases;
  for (float special : specials)
    for (size_t at :
         {size_t(0), size_t(1), size_t(2), size_t(3), size_t(514), size_t(1027),
          size_t(1029), size_t(1031), size_t(1032), size_t(1036)}) {
      cases.push_back(base);
      cases.back()[at] = special;
      // A second special value later in the same vector or the next one.
      cases.push_back(cases.back());
      cases.back()[std::min(count - 1, at + 3)] = std::nanf("");
    }
  cases.push_back(base);
  for (const std::vector<float> &values : cases) {
    const unsigned char *floats =
        reinterpret_cast<const unsigned char *>(values.data());
    EXPECT_EQ((firstMismatch<DType::F32, DType::I64>(floats, count)), "");
    EXPECT_EQ((firstMismatch<DType::F32, DType::U64>(floats, count)), "");
    EXPECT_EQ((firstMismatch<DType::F32, DType::I64>(floats, count, 4)), "");
    std::vector<unsigned char> halves(count * 2), brains(count * 2);
    ASSERT_TRUE(castElements(DType::F32, values.data(), DType::F16,
                             halves.data(), count));
    ASSERT_TRUE(castElements(DType::F32, values.data(), DType::BF16,
                             brains.data(), count));
    EXPECT_EQ((firstMismatch<DType::F16, DType::I64>(halves.data(), count)),
              "");
    EXPECT_EQ((firstMismatch<DType::BF16, DType::I64>(brains.data(), count)),
              "");
    EXPECT_EQ((firstMismatch<DType::BF16, DType::U64>(brains.data(), count)),
              "");
    EXPECT_EQ((firstMismatch<DType::BF16, DType::I32>(brains.data(), count)),
              "");
  }
  // In a destination written with streaming stores (8 MiB and more), at
  // an aligned address and 8 bytes past one.
  std::vector<float> large(1500003);
  for (size_t i = 0; i < large.size(); ++i)
    large[i] = float(int(i % 4001)) - 2000.5f;
  large[1234567] = 0x1p35f;
  large[1234570] = inf;
  large[1400000] = -std::nanf("");
  std::vector<unsigned char> largeHalves(large.size() * 2),
      largeBrains(large.size() * 2);
  ASSERT_TRUE(castElements(DType::F32, large.data(), DType::F16,
                           largeHalves.data(), large.size()));
  ASSERT_TRUE(castElements(DType::F32, large.data(), DType::BF16,
                           largeBrains.data(), large.size()));
  for (size_t dstOffset : {0u, 8u}) {
    EXPECT_EQ((firstMismatch<DType::F32, DType::I64>(
                  reinterpret_cast<const unsigned char *>(large.data()),
                  large.size(), dstOffset)),
              "");
    EXPECT_EQ((firstMismatch<DType::F16, DType::I64>(largeHalves.data(),
                                                     large.size(), dstOffset)),
              "");
    EXPECT_EQ((firstMismatch<DType::BF16, DType::U64>(largeBrains.data(),
                                                      large.size(), dstOffset)),
              "");
  }
}

TEST(FastCastIntegers, InPlaceCastsFindTheirFailures) {
  // Equal sizes may be cast in place: the failures are those of the source.
  std::vector<int32_t> values = {5, 7, -1, 9, -2147483647 - 1, 3};
  std::vector<unsigned char> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  std::vector<unsigned char> separate(bytes.size());
  Status expected =
      castElements(DType::I32, bytes.data(), DType::U32, separate.data(), 6);
  Status inPlace =
      castElements(DType::I32, bytes.data(), DType::U32, bytes.data(), 6);
  ASSERT_FALSE(expected);
  ASSERT_FALSE(inPlace);
  EXPECT_EQ(inPlace.error().message, expected.error().message);
  EXPECT_NE(inPlace.error().message.find("element 2"), std::string::npos);
  EXPECT_EQ(bytes, separate);

  std::vector<float> floats = {1.5f, -0.5f, 3e9f, 2.0f};
  std::vector<unsigned char> floatBytes(16);
  std::memcpy(floatBytes.data(), floats.data(), 16);
  Status floatInPlace = castElements(DType::F32, floatBytes.data(), DType::I32,
                                     floatBytes.data(), 4);
  ASSERT_FALSE(floatInPlace);
  EXPECT_NE(floatInPlace.error().message.find("element 2"), std::string::npos);
  int32_t results[4];
  std::memcpy(results, floatBytes.data(), 16);
  EXPECT_EQ(results[0], 1);
  EXPECT_EQ(results[1], 0);
  EXPECT_EQ(results[2], 0); // no result: 0, as the element path writes
  EXPECT_EQ(results[3], 2);
}

TEST(FastCastIntegers, RegionCopiesReportTheFirstFailingOffset) {
  // Rows of a [4, 600] int64 tensor, cast to int32 run by run; the failing
  // elements are in rows 2 and 3, and the offset is the destination's.
  std::vector<int64_t> values(4 * 600, 1);
  values[2 * 600 + 550] = int64_t(1) << 33;
  values[3 * 600 + 10] = -(int64_t(1) << 40);
  std::vector<int32_t> out(4 * 600);
  TensorView src(values.data(), values.size() * 8, DType::I64, {4, 600});
  MutableTensorView dst(out.data(), out.size() * 4, DType::I32, {4, 600});
  Box whole({0, 0}, {4, 600});
  uint64_t failure = 0;
  Status status =
      copyRegion(src, whole, dst, whole, Permutation::identity(2), &failure);
  EXPECT_FALSE(status);
  EXPECT_EQ(failure, uint64_t(2 * 600 + 550));
  EXPECT_EQ(out[2 * 600 + 550], 0);
  EXPECT_EQ(out[2 * 600 + 549], 1);
}

TEST(FastCastIntegers, TransposesFusedWithACastMatchTheReference) {
  // An unchecked cast with a 2- or 4-byte side is fused with a transpose
  // tile by tile (TransposeTile.h), casting whole rows with the lane loops:
  // int16 -> int32 and uint8 -> float32 through [1, 0], whole tiles and
  // partial ones at the edges.
  constexpr int64_t rows = 200, columns = 136;
  std::vector<int16_t> shorts(rows * columns);
  for (size_t i = 0; i < shorts.size(); ++i)
    shorts[i] = int16_t(i * 2654435761u);
  std::vector<int32_t> ints(rows * columns);
  TensorView src(shorts.data(), shorts.size() * 2, DType::I16, {rows, columns});
  MutableTensorView dst(ints.data(), ints.size() * 4, DType::I32,
                        {columns, rows});
  ASSERT_TRUE(copyRegion(src, Box({0, 0}, {rows, columns}), dst,
                         Box({0, 0}, {columns, rows}), Permutation::reversed(2),
                         nullptr));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c)
      ASSERT_EQ(ints[c * rows + r], int32_t(shorts[r * columns + c]))
          << r << ", " << c;

  std::vector<uint8_t> bytes(rows * columns);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = uint8_t(i * 37);
  std::vector<float> floats(rows * columns);
  TensorView byteView(bytes.data(), bytes.size(), DType::U8, {rows, columns});
  MutableTensorView floatView(floats.data(), floats.size() * 4, DType::F32,
                              {columns, rows});
  ASSERT_TRUE(copyRegion(byteView, Box({0, 0}, {rows, columns}), floatView,
                         Box({0, 0}, {columns, rows}), Permutation::reversed(2),
                         nullptr));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c)
      ASSERT_EQ(floats[c * rows + r], float(bytes[r * columns + c]))
          << r << ", " << c;
}

} // namespace
