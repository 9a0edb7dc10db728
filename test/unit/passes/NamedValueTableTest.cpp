//===- NamedValueTableTest.cpp --------------------------------------------===//
//
// NamedValueTable against std::map, the obvious table: after any sequence of
// assignments (new names, names assigned again, a temporary and a key that
// share their text) every name finds the value the map holds, names never
// assigned are not found, and forEachKey lists each key (not the
// temporaries) once, in the order it was first assigned; reserving first
// changes none of it.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/NamedValueTable.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

namespace aoa {
namespace {

NamedValue valueFrom(size_t producer, uint32_t uses) {
  NamedValue value;
  value.producer = producer;
  value.uses = uses;
  return value;
}

TEST(NamedValueTableTest, TemporaryAndKeyOfOneTextAreTwoNames) {
  NamedValueTable table;
  EXPECT_EQ(table.find(ValueNameRef("w", false)), nullptr);
  table.assign(ValueNameRef("w", false), valueFrom(1, 0));
  EXPECT_FALSE(table.contains(ValueNameRef("w", true)));
  table.assign(ValueNameRef("w", true), valueFrom(2, 0));
  table.assign(ValueNameRef("w", false), valueFrom(3, 5));
  EXPECT_EQ(table.find(ValueNameRef("w", false))->producer, 3u);
  EXPECT_EQ(table.find(ValueNameRef("w", false))->uses, 5u);
  EXPECT_EQ(table.find(ValueNameRef("w", true))->producer, 2u);
  std::vector<std::string> keys;
  table.forEachKey([&](std::string_view text, const NamedValue &value) {
    keys.push_back(std::string(text) + "=" + std::to_string(value.producer));
  });
  EXPECT_EQ(keys, std::vector<std::string>{"w=3"});
}

class NamedValueTableRandomTest : public ::testing::TestWithParam<bool> {};

TEST_P(NamedValueTableRandomTest, AgreesWithAnOrderedMap) {
  bool reserveFirst = GetParam();
  std::mt19937 random(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 5000; ++i)
    texts.push_back(i % 3 ? "%fused_ffn." + std::to_string(i / 16) + ".GATE_" +
                                std::to_string(i % 16)
                          : "model.layers." + std::to_string(i) + ".weight");
  NamedValueTable table;
  if (reserveFirst)
    table.reserve(1500, 30000, 1500, 30000);
  std::map<std::pair<std::string, bool>, size_t> expected;
  std::vector<std::string> keysFirstAssigned;
  for (size_t step = 0; step < 20000; ++step) {
    // Half of the texts are assigned, some many times.
    const std::string &text = texts[random() % (texts.size() / 2)];
    bool temporary = random() % 2;
    auto [it, added] = expected.insert_or_assign({text, temporary}, step);
    if (added && !temporary)
      keysFirstAssigned.push_back(text);
    table.assign(ValueNameRef(text, temporary), valueFrom(step, 0));
  }
  for (const std::string &text : texts)
    for (bool temporary : {false, true}) {
      auto it = expected.find({text, temporary});
      const NamedValue *value = table.find(ValueNameRef(text, temporary));
      if (it == expected.end()) {
        EXPECT_EQ(value, nullptr) << text << temporary;
        EXPECT_FALSE(table.contains(ValueNameRef(text, temporary)));
      } else {
        ASSERT_NE(value, nullptr) << text << temporary;
        EXPECT_EQ(value->producer, it->second) << text << temporary;
      }
    }
  size_t i = 0;
  table.forEachKey([&](std::string_view text, const NamedValue &value) {
    ASSERT_LT(i, keysFirstAssigned.size());
    EXPECT_EQ(text, keysFirstAssigned[i]);
    EXPECT_EQ(value.producer, expected.at({keysFirstAssigned[i], false}));
    ++i;
  });
  EXPECT_EQ(i, keysFirstAssigned.size());
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutReserve, NamedValueTableRandomTest,
                         ::testing::Bool());

} // namespace
} // namespace aoa
