//===- ShardSize.cpp ------------------------------------------------------===//
#include "aoa/formats/ShardSize.h"

#include <cctype>
#include <string>

namespace aoa::formats {

using runtime::Error;
using runtime::Expected;

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text[0])))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

char upper(char c) {
  return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
}

struct Unit {
  unsigned __int128 multiplier = 1;
  bool bits = false;
};

/// Splits the unit off `text` (which keeps the number); false for an
/// unknown unit.
bool takeUnit(std::string_view &text, Unit &unit) {
  size_t end = text.size();
  while (end > 0 && std::isalpha(static_cast<unsigned char>(text[end - 1])))
    --end;
  std::string_view spelled = text.substr(end);
  text = trim(text.substr(0, end));
  if (spelled.empty())
    return true;
  std::string name;
  for (char c : spelled)
    name += upper(c);
  static const char kPrefixes[] = "KMGT";
  for (int power = 1; power <= 4; ++power) {
    char prefix = kPrefixes[power - 1];
    if (name == std::string(1, prefix) + "IB") {
      unit.multiplier = (unsigned __int128)1 << (10 * power);
      return true;
    }
    if (name == std::string(1, prefix) + "B") {
      unit.multiplier = 1;
      for (int k = 0; k < power; ++k)
        unit.multiplier *= 1000;
      // transformers: "5Gb" is in bits (not for TB, which it does not know).
      unit.bits = spelled.back() == 'b' && prefix != 'T';
      return true;
    }
  }
  return false;
}

} // namespace

Expected<uint64_t> parseShardSize(std::string_view text) {
  auto fail = [&]() {
    return Error{"'" + std::string(text) + "' is not a shard size",
                 "write a number and a unit as Hugging Face does: 5GB "
                 "(5·10^9 bytes), 5GiB (5·2^30 bytes), 100MB, 40KB, or "
                 "plain bytes"};
  };
  std::string_view number = trim(text);
  Unit unit;
  if (!takeUnit(number, unit) || number.empty())
    return fail();
  unsigned __int128 digits = 0;
  unsigned __int128 scale = 1;
  bool sawDigit = false;
  bool sawPoint = false;
  for (char c : number) {
    if (c == '.' && !sawPoint) {
      sawPoint = true;
      continue;
    }
    if (c < '0' || c > '9')
      return fail();
    sawDigit = true;
    // 38 significant digits fit; more is not a size anyway.
    if (digits > (unsigned __int128)UINT64_MAX * 1000)
      return fail();
    digits = digits * 10 + unsigned(c - '0');
    if (sawPoint) {
      if (scale > (unsigned __int128)1'000'000'000'000'000'000ull)
        return fail();
      scale *= 10;
    }
  }
  if (!sawDigit)
    return fail();
  // digits < 2^78 and multiplier <= 2^40: the product fits in 128 bits.
  unsigned __int128 bytes = digits * unit.multiplier / scale;
  if (unit.bits)
    bytes /= 8;
  if (bytes > UINT64_MAX)
    return Error{"'" + std::string(text) + "' is too large a shard size",
                 "shard sizes are at most 2^64 - 1 bytes"};
  return uint64_t(bytes);
}

} // namespace aoa::formats
