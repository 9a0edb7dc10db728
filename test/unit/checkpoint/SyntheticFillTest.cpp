//===- SyntheticFillTest.cpp - Deterministic tensor contents --------------===//
#include "aoa/checkpoint/SyntheticFill.h"

#include "aoa/runtime/transforms/ElementValue.h"

#include "BruteForce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>

using namespace aoa;
using namespace aoa::checkpoint;
using namespace aoa::runtime;

namespace {

std::vector<std::byte> fill(const SyntheticFill &how, std::string_view key,
                            DType dtype, std::vector<int64_t> shape,
                            const Box &region) {
  std::vector<std::byte> buffer(size_t(region.volume()) * dtypeSize(dtype));
  Status status = fillSynthetic(how, key, dtype, shape, region, buffer.data(),
                                buffer.size());
  EXPECT_TRUE(status.ok()) << status.error().toString();
  return buffer;
}

std::vector<double> values(DType dtype, const std::vector<std::byte> &bytes) {
  std::vector<double> out;
  for (size_t i = 0; i < bytes.size(); i += dtypeSize(dtype))
    out.push_back(elementAsDouble(dtype, bytes.data() + i));
  return out;
}

Box box(const std::vector<Interval> &dims) {
  return Box(llvm::ArrayRef<Interval>(dims));
}

SyntheticFill randomFill(uint64_t seed) {
  return SyntheticFill{SyntheticFill::Kind::Random, seed};
}
const SyntheticFill kIota{SyntheticFill::Kind::Iota, 0};

TEST(SyntheticFill, ParsesItsSpellings) {
  Expected<SyntheticFill> plain = parseSyntheticFill("random");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->kind, SyntheticFill::Kind::Random);
  EXPECT_EQ(plain->seed, 0u);
  Expected<SyntheticFill> seeded =
      parseSyntheticFill("random:18446744073709551615");
  ASSERT_TRUE(seeded.ok());
  EXPECT_EQ(seeded->seed, UINT64_MAX);
  EXPECT_EQ(seeded->toString(), "random:18446744073709551615");
  Expected<SyntheticFill> iota = parseSyntheticFill("iota");
  ASSERT_TRUE(iota.ok());
  EXPECT_EQ(iota->kind, SyntheticFill::Kind::Iota);
  EXPECT_EQ(iota->toString(), "iota");

  Expected<SyntheticFill> unknown = parseSyntheticFill("zeros");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown fill 'zeros'");
  EXPECT_EQ(unknown.error().hint,
            "a fill is 'random', 'random:SEED' (SEED a decimal integer, 0 to "
            "18446744073709551615) or 'iota'");
  for (const char *bad : {"random:", "random:-1", "random:7x", "random: 7",
                          "random:18446744073709551616"}) {
    Expected<SyntheticFill> parsed = parseSyntheticFill(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().message.substr(0, 9), "bad seed ") << bad;
  }
}

TEST(SyntheticFill, IotaCountsRowMajorIndices) {
  std::vector<int64_t> shape = {4, 6};
  Box region = box({{1, 3}, {2, 4}});
  EXPECT_EQ(values(DType::F32, fill(kIota, "k", DType::F32, shape, region)),
            (std::vector<double>{8, 9, 14, 15}));
  EXPECT_EQ(values(DType::I16, fill(kIota, "k", DType::I16, shape, region)),
            (std::vector<double>{8, 9, 14, 15}));
  EXPECT_EQ(values(DType::Bool, fill(kIota, "k", DType::Bool, shape, region)),
            (std::vector<double>{0, 1, 0, 1}));
  // Wider than the dtype: wrapped (integers), rounded to nearest (floats).
  std::vector<int64_t> large = {1, 1000};
  EXPECT_EQ(values(DType::I8, fill(kIota, "k", DType::I8, large,
                                   box({{0, 1}, {254, 258}}))),
            (std::vector<double>{-2, -1, 0, 1}));
  EXPECT_EQ(values(DType::BF16, fill(kIota, "k", DType::BF16, large,
                                     box({{0, 1}, {257, 259}}))),
            (std::vector<double>{256, 258}));
  EXPECT_EQ(values(DType::F64, fill(kIota, "k", DType::F64, {}, Box())),
            (std::vector<double>{0}));
}

// The value of an element depends on (fill, key, index) only: any region of
// any layout reads the same values as the whole tensor at those indices.
TEST(SyntheticFill, ValuesDoNotDependOnTheRegion) {
  std::mt19937_64 rng(0xF111);
  std::vector<int64_t> shape = {5, 3, 4};
  Box whole = Box::fromShape(shape);
  for (DType dtype : kAllDTypes) {
    for (const SyntheticFill &how : {randomFill(3), kIota}) {
      std::vector<std::byte> all = fill(how, "layers.0.w", dtype, shape, whole);
      size_t size = dtypeSize(dtype);
      for (int iteration = 0; iteration < 20; ++iteration) {
        std::vector<Interval> dims;
        for (int64_t extent : shape) {
          int64_t x = int64_t(rng() % uint64_t(extent + 1));
          int64_t y = int64_t(rng() % uint64_t(extent + 1));
          dims.push_back(Interval{std::min(x, y), std::max(x, y)});
        }
        Box region = box(dims);
        std::vector<std::byte> part =
            fill(how, "layers.0.w", dtype, shape, region);
        size_t i = 0;
        test::forEachPoint(region, [&](const test::Point &p) {
          int64_t index = *rowMajorIndex(whole, p);
          EXPECT_EQ(std::memcmp(part.data() + i * size,
                                all.data() + size_t(index) * size, size),
                    0)
              << dtypeName(dtype) << " " << region.toString();
          ++i;
        });
      }
    }
  }
}

TEST(SyntheticFill, RandomFloatsAreSpreadOverMinusOneToOne) {
  std::vector<int64_t> shape = {64, 64};
  Box whole = Box::fromShape(shape);
  // Significand bits: every value is k / 2^(p-1), exactly representable.
  for (auto [dtype, bits] : {std::pair{DType::F64, 53},
                             {DType::F32, 24},
                             {DType::F16, 11},
                             {DType::BF16, 8}}) {
    std::vector<double> v =
        values(dtype, fill(randomFill(1), "w", dtype, shape, whole));
    std::set<double> distinct(v.begin(), v.end());
    double sum = 0;
    for (double x : v) {
      ASSERT_GE(x, -1.0);
      ASSERT_LT(x, 1.0);
      double k = std::ldexp(x, bits - 1);
      ASSERT_EQ(k, std::floor(k)) << dtypeName(dtype) << " " << x;
      sum += x;
    }
    EXPECT_NEAR(sum / double(v.size()), 0.0, 0.05) << dtypeName(dtype);
    // 4096 draws from 2^bits values.
    size_t expected = dtype == DType::BF16  ? 250u
                      : dtype == DType::F16 ? 1500u
                                            : 4000u;
    EXPECT_GT(distinct.size(), expected) << dtypeName(dtype);
  }
}

TEST(SyntheticFill, SeedsKeysAndDTypesGiveOtherValues) {
  std::vector<int64_t> shape = {32};
  Box whole = Box::fromShape(shape);
  auto f32 = [&](uint64_t seed, const char *key) {
    return values(DType::F32,
                  fill(randomFill(seed), key, DType::F32, shape, whole));
  };
  EXPECT_EQ(f32(1, "a"), f32(1, "a"));
  EXPECT_NE(f32(1, "a"), f32(2, "a"));
  EXPECT_NE(f32(1, "a"), f32(1, "b"));

  std::vector<double> bools =
      values(DType::Bool, fill(randomFill(1), "a", DType::Bool, {256},
                               Box::fromShape({256})));
  std::set<double> seen(bools.begin(), bools.end());
  EXPECT_EQ(seen, (std::set<double>{0, 1}));
  std::vector<double> bytes =
      values(DType::U8, fill(randomFill(1), "a", DType::U8, {4096},
                             Box::fromShape({4096})));
  std::set<double> byteValues(bytes.begin(), bytes.end());
  EXPECT_EQ(byteValues.size(), 256u);
  std::vector<double> signedBytes =
      values(DType::I8, fill(randomFill(1), "a", DType::I8, {4096},
                             Box::fromShape({4096})));
  EXPECT_EQ(*std::min_element(signedBytes.begin(), signedBytes.end()), -128);
}

TEST(SyntheticFill, RejectsBadRegionsAndBuffers) {
  std::vector<std::byte> buffer(64);
  Status outside = fillSynthetic(kIota, "w", DType::F32, {4, 4},
                                 box({{2, 5}, {0, 1}}), buffer.data(), 12);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().message,
            "key 'w': region [2:5, 0:1] is not inside its global shape [4, 4]");
  Status size = fillSynthetic(kIota, "w", DType::F32, {4, 4},
                              box({{0, 2}, {0, 1}}), buffer.data(), 12);
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.error().message,
            "key 'w': a buffer of 12 bytes for region [0:2, 0:1]");
}

} // namespace
