//===- PackedOptionalTest.cpp - Optionals without a flag ------------------===//
//
// A PackedOptional must read, compare and convert like the std::optional it
// replaced in plan::StoredTensor, in no more room than its value.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/Plan.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>

using namespace aoa;

namespace {

using FlatRange = PackedOptional<FlatElementRange>;

TEST(PackedOptionalTest, NoneByDefaultAndAfterReset) {
  FlatRange none;
  EXPECT_FALSE(none);
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(std::optional<FlatElementRange>(none), std::nullopt);
  FlatRange some = FlatElementRange{4, 10};
  ASSERT_TRUE(some);
  EXPECT_EQ(some->begin, 4);
  EXPECT_EQ((*some).end, 10);
  some.reset();
  EXPECT_FALSE(some);
  some = std::nullopt;
  EXPECT_FALSE(some);
}

TEST(PackedOptionalTest, ComparesLikeAStdOptional) {
  FlatRange none, a = FlatElementRange{0, 6}, b = FlatElementRange{0, 7};
  std::optional<FlatElementRange> stdNone, stdA = FlatElementRange{0, 6};
  EXPECT_TRUE(none == FlatRange());
  EXPECT_TRUE(a == FlatRange(FlatElementRange{0, 6}));
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(a != none);
  // Against std::optional, both ways round: two nones are equal (std's own
  // mixed comparison would take the PackedOptional for a value).
  EXPECT_TRUE(none == stdNone);
  EXPECT_TRUE(stdNone == none);
  EXPECT_FALSE(none != stdNone);
  EXPECT_TRUE(a == stdA);
  EXPECT_TRUE(stdA != b);
  EXPECT_TRUE(stdA != none);
}

TEST(PackedOptionalTest, ConvertsBothWaysAndTakesNoMoreRoomThanItsValue) {
  std::optional<FlatElementRange> in = FlatElementRange{2, 3};
  FlatRange packed = in;
  std::optional<FlatElementRange> out = packed;
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, *in);
  EXPECT_EQ(sizeof(FlatRange), sizeof(FlatElementRange));
  EXPECT_EQ(sizeof(PackedOptional<plan::ByteRange>), sizeof(plan::ByteRange));
  // The values that stand for none are ranges no tensor stores.
  EXPECT_LT(PackedNone<FlatElementRange>::value().begin, 0);
  EXPECT_EQ(PackedNone<plan::ByteRange>::value().begin,
            std::numeric_limits<uint64_t>::max());
}

} // namespace
