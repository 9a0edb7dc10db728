//===- Json.h - Writing JSON strings ----------------------------*- C++ -*-===//
//
// Mappings, shard metadata and safetensors headers are written by hand (they
// can be large); this is their one string escaper.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_JSON_H
#define AOA_IR_JSON_H

#include <string>
#include <string_view>

namespace aoa {

/// Appends `s` as a JSON string literal: quoted, with `"`, `\`, newline and
/// tab escaped and other control characters as \u00XX.
void appendJsonString(std::string &out, std::string_view s);

} // namespace aoa

#endif // AOA_IR_JSON_H
