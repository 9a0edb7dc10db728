//===- ShardSize.h - --max-shard-size as Hugging Face spells it -*- C++ -*-===//
//
// Hugging Face's save_pretrained(max_shard_size=...) takes sizes like "5GB"
// (transformers' convert_file_size_to_int; huggingface_hub's
// parse_size_to_int): decimal units are powers of 1000, "iB" units powers of
// 1024, the unit's case does not matter, except that a unit ending in a
// lowercase "b" after K, M or G counts bits (transformers: "5Gb" is 5·10^9
// bits = 625,000,000 bytes).
//
//   5GB = 5,000,000,000    5GiB = 5·2^30    100MB = 10^8    40KB = 40,000
//
// Also accepted, as huggingface_hub accepts them: TB and TiB, a decimal
// fraction ("1.5GB"; the result is rounded down to whole bytes), and plain
// digits for bytes (the Python API takes an int).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_SHARDSIZE_H
#define AOA_FORMATS_SHARDSIZE_H

#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <string_view>

namespace aoa::formats {

/// Hugging Face's default max_shard_size, "5GB".
inline constexpr uint64_t kDefaultMaxShardSize = 5'000'000'000;

/// The bytes `text` stands for: optional blanks, digits with an optional
/// decimal fraction, optional blanks, a unit (KB MB GB TB KiB MiB GiB TiB,
/// any case; Kb Mb Gb in bits) or none (bytes), optional blanks.
runtime::Expected<uint64_t> parseShardSize(std::string_view text);

} // namespace aoa::formats

#endif // AOA_FORMATS_SHARDSIZE_H
