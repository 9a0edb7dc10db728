//===- ShardSizeTest.cpp - --max-shard-size as Hugging Face spells it -----===//
//
// The expected values are what transformers' convert_file_size_to_int and
// huggingface_hub's parse_size_to_int return for the same strings.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/ShardSize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace aoa::formats;
using ::testing::HasSubstr;

namespace {

uint64_t parsed(const char *text) {
  aoa::runtime::Expected<uint64_t> size = parseShardSize(text);
  EXPECT_TRUE(size.ok()) << text << ": "
                         << (size.ok() ? "" : size.error().toString());
  return size.ok() ? *size : 0;
}

TEST(ShardSizeTest, DecimalUnitsArePowersOf1000) {
  EXPECT_EQ(parsed("5GB"), 5'000'000'000u);
  EXPECT_EQ(parsed("100MB"), 100'000'000u);
  EXPECT_EQ(parsed("40KB"), 40'000u);
  EXPECT_EQ(parsed("2TB"), 2'000'000'000'000u);
  EXPECT_EQ(kDefaultMaxShardSize, parsed("5GB"));
}

TEST(ShardSizeTest, BinaryUnitsArePowersOf1024) {
  EXPECT_EQ(parsed("5GiB"), 5ull << 30);
  EXPECT_EQ(parsed("3MiB"), 3ull << 20);
  EXPECT_EQ(parsed("40KiB"), 40u * 1024);
  EXPECT_EQ(parsed("1TiB"), 1ull << 40);
}

TEST(ShardSizeTest, UnitsIgnoreCaseButALowercaseBCountsBits) {
  EXPECT_EQ(parsed("5gib"), 5ull << 30);
  EXPECT_EQ(parsed("5GIB"), 5ull << 30);
  EXPECT_EQ(parsed("100mB"), 100'000'000u);
  // transformers: a trailing lowercase b after K, M or G is bits.
  EXPECT_EQ(parsed("5Gb"), 625'000'000u);
  EXPECT_EQ(parsed("5gb"), 625'000'000u);
  EXPECT_EQ(parsed("8Kb"), 1'000u);
  EXPECT_EQ(parsed("1Mb"), 125'000u);
}

TEST(ShardSizeTest, FractionsBlanksAndPlainBytes) {
  EXPECT_EQ(parsed("1.5GB"), 1'500'000'000u);
  EXPECT_EQ(parsed("0.5GiB"), 1ull << 29);
  EXPECT_EQ(parsed(".25KB"), 250u);
  EXPECT_EQ(parsed("1.0001KB"), 1000u); // rounded down to whole bytes
  EXPECT_EQ(parsed(" 5 GB "), 5'000'000'000u);
  EXPECT_EQ(parsed("123456"), 123456u);
  EXPECT_EQ(parsed("0GB"), 0u);
}

TEST(ShardSizeTest, RejectsWhatIsNotASize) {
  for (const char *text :
       {"", "GB", "5XB", "5 G", "5B", "-5GB", "+5GB", "5e3GB", "5..0GB",
        "five GB", "5GB5", "0x10MB", "."}) {
    aoa::runtime::Expected<uint64_t> size = parseShardSize(text);
    EXPECT_FALSE(size.ok())
        << "'" << text << "' gave " << (size.ok() ? *size : 0);
    if (!size.ok()) {
      EXPECT_THAT(size.error().message, HasSubstr("is not a shard size"));
      EXPECT_THAT(size.error().hint, HasSubstr("5GiB"));
    }
  }
  // Python's float("1.") is 1.0.
  EXPECT_EQ(parsed("1.KB"), 1000u);
}

TEST(ShardSizeTest, RejectsSizesBeyond64Bits) {
  aoa::runtime::Expected<uint64_t> size = parseShardSize("20000000TiB");
  ASSERT_FALSE(size.ok());
  EXPECT_THAT(size.error().message, HasSubstr("too large"));
  EXPECT_EQ(parsed("16000000TiB"), 16'000'000ull << 40);
}

} // namespace
