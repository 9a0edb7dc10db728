//===- ElementValueTest.cpp - Elements as numbers and decimal text --------===//
#include "aoa/runtime/transforms/ElementValue.h"

#include "aoa/runtime/transforms/FloatConversion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace aoa;
using namespace aoa::runtime;

namespace {

template <typename T> std::string format(DType dtype, T value) {
  return formatElement(dtype, &value);
}
template <typename T> double number(DType dtype, T value) {
  return elementAsDouble(dtype, &value);
}

TEST(ElementValue, FloatsAreShortestRoundTrips) {
  EXPECT_EQ(format(DType::F32, 0.1f), "0.1");
  EXPECT_EQ(format(DType::F64, 0.1), "0.1");
  EXPECT_EQ(format(DType::F32, -0.0f), "-0");
  EXPECT_EQ(format(DType::F64, -HUGE_VAL), "-inf");
  EXPECT_EQ(format(DType::F32, std::nextafter(1.0f, 2.0f)), "1.0000001");
  EXPECT_EQ(format(DType::F16, uint16_t(0x3c00)), "1");
  EXPECT_EQ(format(DType::F16, uint16_t(0xc100)), "-2.5");
  EXPECT_EQ(format(DType::BF16, uint16_t(0x3f80)), "1");
  EXPECT_EQ(format(DType::BF16, floatToBFloat16(0.1f)), "0.100097656");
  EXPECT_EQ(number(DType::BF16, floatToBFloat16(0.1f)), 0.10009765625);
  EXPECT_EQ(number(DType::F16, uint16_t(0x0001)), std::ldexp(1.0, -24));
}

TEST(ElementValue, NaNsShowTheirBits) {
  EXPECT_EQ(format(DType::F32, uint32_t(0x7fc00001)), "nan (bits 0x7fc00001)");
  EXPECT_EQ(format(DType::F64, uint64_t(0xfff8000000000000u)),
            "nan (bits 0xfff8000000000000)");
  EXPECT_EQ(format(DType::BF16, uint16_t(0x7fc1)), "nan (bits 0x7fc1)");
  EXPECT_TRUE(std::isnan(number(DType::F16, uint16_t(0x7e00))));
}

TEST(ElementValue, IntegersAndBools) {
  EXPECT_EQ(format(DType::I64, int64_t(-9223372036854775807 - 1)),
            "-9223372036854775808");
  EXPECT_EQ(format(DType::I32, int32_t(-7)), "-7");
  EXPECT_EQ(format(DType::I16, int16_t(-300)), "-300");
  EXPECT_EQ(format(DType::I8, int8_t(-128)), "-128");
  EXPECT_EQ(format(DType::U8, uint8_t(255)), "255");
  EXPECT_EQ(format(DType::Bool, uint8_t(0)), "false");
  EXPECT_EQ(format(DType::Bool, uint8_t(1)), "true");
  EXPECT_EQ(format(DType::Bool, uint8_t(2)), "true (0x02)");
  EXPECT_EQ(number(DType::I8, int8_t(-128)), -128.0);
  EXPECT_EQ(number(DType::U8, uint8_t(200)), 200.0);
  EXPECT_EQ(number(DType::Bool, uint8_t(2)), 1.0);
  EXPECT_EQ(number(DType::I64, int64_t(1) << 53), std::ldexp(1.0, 53));
}

TEST(ElementValue, ReadsUnalignedElements) {
  unsigned char bytes[9] = {0};
  double value = -1.5;
  std::memcpy(bytes + 1, &value, 8);
  EXPECT_EQ(elementAsDouble(DType::F64, bytes + 1), -1.5);
  EXPECT_EQ(formatElement(DType::F64, bytes + 1), "-1.5");
}

} // namespace
