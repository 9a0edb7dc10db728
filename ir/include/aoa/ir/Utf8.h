//===- Utf8.h - Decoding and checking UTF-8 ---------------------*- C++ -*-===//
//
// Names in metadata, plans and safetensors headers are UTF-8 (JSON's
// encoding); text that is not must be refused where it enters, or a file we
// write would be one our own readers reject.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_UTF8_H
#define AOA_IR_UTF8_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace aoa {

/// Decodes the character at `text[i]` and advances `i` past it; a malformed
/// sequence (bad lead or continuation byte, truncation, overlong form,
/// surrogate, past U+10FFFF) gives nullopt and advances one byte.
std::optional<uint32_t> decodeUtf8(std::string_view text, size_t &i);

/// Whether all of `text` is well-formed UTF-8.
bool isValidUtf8(std::string_view text);

} // namespace aoa

#endif // AOA_IR_UTF8_H
