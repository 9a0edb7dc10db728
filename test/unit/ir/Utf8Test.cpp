//===- Utf8Test.cpp -------------------------------------------------------===//
//
// isValidUtf8 against a reference written from the table of well-formed
// byte sequences (Unicode 15, table 3-7), for strings that put ASCII runs,
// multi-byte characters and every kind of ill-formed sequence at every
// position around the 8-byte words the validator skips ASCII in.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/Utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace aoa;

namespace {

/// Table 3-7: the lead byte's range and the allowed range of each
/// continuation byte.
bool referenceValid(const std::string &text) {
  struct Row {
    unsigned char leadLow, leadHigh;
    std::vector<std::pair<unsigned char, unsigned char>> next;
  };
  const std::vector<Row> rows = {
      {0x00, 0x7F, {}},
      {0xC2, 0xDF, {{0x80, 0xBF}}},
      {0xE0, 0xE0, {{0xA0, 0xBF}, {0x80, 0xBF}}},
      {0xE1, 0xEC, {{0x80, 0xBF}, {0x80, 0xBF}}},
      {0xED, 0xED, {{0x80, 0x9F}, {0x80, 0xBF}}},
      {0xEE, 0xEF, {{0x80, 0xBF}, {0x80, 0xBF}}},
      {0xF0, 0xF0, {{0x90, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}}},
      {0xF1, 0xF3, {{0x80, 0xBF}, {0x80, 0xBF}, {0x80, 0xBF}}},
      {0xF4, 0xF4, {{0x80, 0x8F}, {0x80, 0xBF}, {0x80, 0xBF}}},
  };
  size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    const Row *row = nullptr;
    for (const Row &r : rows)
      if (lead >= r.leadLow && lead <= r.leadHigh)
        row = &r;
    if (!row || i + 1 + row->next.size() > text.size())
      return false;
    for (size_t k = 0; k < row->next.size(); ++k) {
      auto b = static_cast<unsigned char>(text[i + 1 + k]);
      if (b < row->next[k].first || b > row->next[k].second)
        return false;
    }
    i += 1 + row->next.size();
  }
  return true;
}

TEST(Utf8Test, MatchesTheTableAtEveryPositionAroundAWord) {
  const std::vector<std::string> pieces = {
      "\xC3\xA9",         // é
      "\xE2\x82\xAC",     // €
      "\xF0\x9F\x98\x80", // U+1F600
      "\xF4\x8F\xBF\xBF", // U+10FFFF, the last code point
      "\x80",             // a continuation byte alone
      "\xC3",             // a lead byte cut short
      "\xE2\x82",         // three bytes cut after two
      "\xC0\xAF",         // overlong '/'
      "\xE0\x80\xAF",     // overlong, three bytes
      "\xED\xA0\x80",     // a UTF-16 surrogate
      "\xF4\x90\x80\x80", // above U+10FFFF
      "\xF8\x88\x80\x80\x80", // a five-byte form
      "\xFF",
      std::string("\x00", 1), // NUL is ASCII
  };
  size_t valid = 0, invalid = 0;
  for (const std::string &piece : pieces)
    for (size_t before = 0; before <= 17; ++before)
      for (size_t after : {0, 1, 7, 8, 9}) {
        std::string text =
            std::string(before, 'a') + piece + std::string(after, 'z');
        bool expected = referenceValid(text);
        EXPECT_EQ(isValidUtf8(text), expected)
            << "piece " << testing::PrintToString(piece) << " after "
            << before << " ASCII bytes, before " << after;
        (expected ? valid : invalid) += 1;
      }
  // Both answers are exercised.
  EXPECT_GT(valid, 100u);
  EXPECT_GT(invalid, 500u);
}

TEST(Utf8Test, LongAsciiAndEmptyTextsAreValid) {
  EXPECT_TRUE(isValidUtf8(""));
  EXPECT_TRUE(isValidUtf8(std::string(1000, 'k')));
  std::string high(1000, 'k');
  high[999] = '\x80';
  EXPECT_FALSE(isValidUtf8(high));
  high[999] = 'k';
  high[512] = '\xBF';
  EXPECT_FALSE(isValidUtf8(high));
}

} // namespace
