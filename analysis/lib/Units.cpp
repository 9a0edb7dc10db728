//===- Units.cpp - Bytes and seconds as the analysis prints them ----------===//
#include "Units.h"

#include <cstdio>

namespace aoa {
namespace analysis {

std::string formatBytes(int64_t bytes) {
  static const char *const units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000 && bytes > -1000)
    return std::to_string(bytes) + " B";
  double value = double(bytes) / 1000;
  size_t unit = 0;
  while ((value >= 1000 || value <= -1000) && unit + 1 < std::size(units)) {
    value /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f %s", value, units[unit]);
  return text;
}

std::string formatSeconds(double seconds) {
  if (seconds == 0)
    return "0 s";
  char text[32];
  if (seconds >= 1)
    std::snprintf(text, sizeof(text), "%.3f s", seconds);
  else if (seconds >= 1e-3)
    std::snprintf(text, sizeof(text), "%.3f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof(text), "%.3f us", seconds * 1e6);
  return text;
}

std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

} // namespace analysis
} // namespace aoa
