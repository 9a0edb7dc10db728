//===- ContentHashText.h - Content hashes as text ---------------*- C++ -*-===//
//
// Shard metadata records the xxh3-64 hash of every stored tensor (docs/shard-metadata.md,
// "Content hashes") as 16 hex digits ("xxh3": "2d06800538d394c2"). The metadata writer
// (ir), its loader (frontend) and the runtime that computes the hashes all
// spell them through these two functions.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_CONTENTHASHTEXT_H
#define AOA_IR_CONTENTHASHTEXT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aoa {

/// "2d06800538d394c2": 16 lowercase hex digits, zero-padded.
std::string formatContentHash(uint64_t hash);

/// The inverse of formatContentHash: exactly 16 hex digits (either case);
/// nullopt otherwise.
std::optional<uint64_t> parseContentHash(std::string_view text);

} // namespace aoa

#endif // AOA_IR_CONTENTHASHTEXT_H
