//===- TransformTableTest.cpp - A plan's table of distinct transforms -----===//
//
// Copy instructions name their steps by id: equal steps (by their text) get
// one id, in the order first seen, and id 0 is the empty transform.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/Plan.h"

#include <gtest/gtest.h>

using namespace aoa;

namespace {

std::vector<plan::TransformStep> steps(std::vector<std::string> texts,
                                       size_t rank) {
  std::string why;
  std::optional<std::vector<plan::TransformStep>> parsed =
      plan::parseTransformSteps(texts, rank, why);
  EXPECT_TRUE(parsed) << why;
  return parsed.value_or(std::vector<plan::TransformStep>{});
}

TEST(TransformTableTest, EqualStepsShareAnIdInFirstSeenOrder) {
  plan::TransformTable table;
  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table[0].empty());
  EXPECT_EQ(table.intern({}), 0u);
  EXPECT_EQ(table.intern(steps({"[1, 0]", "float16"}, 2)), 1u);
  EXPECT_EQ(table.intern(steps({"float16"}, 2)), 2u);
  EXPECT_EQ(table.intern(steps({"[1, 0]", "float16"}, 2)), 1u);
  // The same steps in another order are another transform.
  EXPECT_EQ(table.intern(steps({"float16", "[1, 0]"}, 2)), 3u);
  EXPECT_EQ(table.intern(steps({"reshape:[4, 2, 3]"}, 2)), 4u);
  ASSERT_EQ(table.size(), 5u);
  ASSERT_EQ(table[1].size(), 2u);
  EXPECT_EQ(table[1][0].text(), "[1, 0]");
  EXPECT_EQ(table[1][1].text(), "float16");

  // A copy keeps the ids and the index.
  plan::TransformTable copy = table;
  EXPECT_EQ(copy.intern(steps({"float16"}, 2)), 2u);
  EXPECT_EQ(copy.intern(steps({"bfloat16"}, 2)), 5u);
  EXPECT_EQ(table.size(), 5u);
}

} // namespace
