//===- ByteSize.cpp -------------------------------------------------------===//
#include "aoa/ir/ByteSize.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <iterator>

namespace aoa {

std::optional<int64_t> parseByteSize(const std::string &text) {
  size_t i = 0;
  int64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (value > (INT64_MAX - 9) / 10)
      return std::nullopt;
    value = value * 10 + (text[i++] - '0');
  }
  if (i == 0)
    return std::nullopt;
  std::string unit = text.substr(i);
  for (char &c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const char *const kUnits = "KMGT";
  int shift = 0;
  if (!unit.empty() && std::strchr(kUnits, unit[0])) {
    shift = 10 * (static_cast<int>(std::strchr(kUnits, unit[0]) - kUnits) + 1);
    unit.erase(0, 1);
  }
  if (!(unit.empty() || unit == "B" || (shift && unit == "IB")))
    return std::nullopt;
  if (value < 0 || value > (INT64_MAX >> shift))
    return std::nullopt;
  // 0: no budget.
  return value == 0 ? INT64_MAX : value << shift;
}

std::string formatByteSize(int64_t bytes) {
  static const char *const kUnits[] = {"KiB", "MiB", "GiB",
                                       "TiB", "PiB", "EiB"};
  if (bytes < 1024 && bytes > -1024)
    return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  value /= 1024;
  while ((value >= 1024 || value <= -1024) && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f %s", value, kUnits[unit]);
  return text;
}

} // namespace aoa
