//===- ByteSize.h - Byte counts as people write and read them ---*- C++ -*-===//
//
// Command lines take sizes like "512M" or "4GiB" (--memory-budget,
// --memory-limit) and summaries print them in binary units.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_BYTESIZE_H
#define AOA_IR_BYTESIZE_H

#include <cstdint>
#include <optional>
#include <string>

namespace aoa {

/// Parses a byte count: digits with an optional K, M, G or T suffix (powers
/// of 1024, an optional trailing "B" or "iB"); 0 means no limit (INT64_MAX).
std::optional<int64_t> parseByteSize(const std::string &text);

/// `512 B`, `1.50 KiB`, `2.00 GiB`: binary units with two decimals.
std::string formatByteSize(int64_t bytes);

} // namespace aoa

#endif // AOA_IR_BYTESIZE_H
