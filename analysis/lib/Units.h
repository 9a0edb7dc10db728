//===- Units.h - Bytes and seconds as the analysis prints them --*- C++ -*-===//
//
// Private to the analysis library. Bandwidths are decimal GB/s, so bytes
// are printed in decimal units too (1 GB = 10^9 bytes): a reader divides one
// by the other without converting.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_ANALYSIS_LIB_UNITS_H
#define AOA_ANALYSIS_LIB_UNITS_H

#include <cstdint>
#include <string>

namespace aoa {
namespace analysis {

/// "512 B", "1.50 kB", "6.00 GB", "1.20 TB".
std::string formatBytes(int64_t bytes);
/// "2.000 s", "12.500 ms", "3.000 us", "0 s".
std::string formatSeconds(double seconds);
/// A number as JSON and the spec write it: "6", "2.5".
std::string formatNumber(double value);

} // namespace analysis
} // namespace aoa

#endif // AOA_ANALYSIS_LIB_UNITS_H
