//===- FirstOccurrenceTest.cpp --------------------------------------------===//
//
// firstOccurrences against a scan of every earlier item, with hashes that
// collide on purpose (few distinct values: long probes, equal tags of
// unequal items) and with good ones, and with an equivalence under which
// some items equal nothing.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/FirstOccurrence.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

using namespace aoa;

namespace {

std::vector<uint32_t> scanned(const std::vector<int> &items) {
  std::vector<uint32_t> first(items.size());
  for (uint32_t i = 0; i < items.size(); ++i) {
    first[i] = i;
    if (items[i] < 0)
      continue; // equal to nothing
    for (uint32_t j = 0; j < i; ++j)
      if (items[j] == items[i]) {
        first[i] = j;
        break;
      }
  }
  return first;
}

std::vector<int> randomItems(size_t count, int distinct, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-3, distinct - 1);
  std::vector<int> items(count);
  for (int &item : items)
    item = value(rng);
  return items;
}

TEST(FirstOccurrenceTest, MatchesAScanWithCollidingHashes) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<int> items = randomItems(3000, 500, seed);
    auto equal = [&](size_t a, size_t b) {
      return items[a] >= 0 && items[a] == items[b];
    };
    // Eight hash values in all, with the same 32 tag bits: every probe of
    // an occupied slot compares items.
    std::vector<uint32_t> colliding = firstOccurrences(
        items.size(),
        [&](size_t i) { return uint64_t(uint32_t(items[i]) % 8); }, equal);
    EXPECT_EQ(colliding, scanned(items)) << "seed " << seed;
    std::vector<uint32_t> mixed = firstOccurrences(
        items.size(),
        [&](size_t i) {
          return uint64_t(uint32_t(items[i])) * 0x9e3779b97f4a7c15ull;
        },
        equal);
    EXPECT_EQ(mixed, scanned(items)) << "seed " << seed;
  }
}

TEST(FirstOccurrenceTest, EdgeCases) {
  auto same = [](size_t, size_t) { return true; };
  auto zero = [](size_t) { return uint64_t(0); };
  EXPECT_TRUE(firstOccurrences(0, zero, same).empty());
  EXPECT_EQ(firstOccurrences(1, zero, same), std::vector<uint32_t>{0});
  // All equal: every item's first is item 0, across a table that fills
  // past its first slots (more items than the prefetch distance).
  std::vector<uint32_t> all = firstOccurrences(100, zero, same);
  for (uint32_t first : all)
    EXPECT_EQ(first, 0u);
}

} // namespace
