//===- IntegerList.h - Python list literals of integers ---------*- C++ -*-===//
//
// Permutations ("[1, 0]"), reshape shapes ("[4, 2, 3]") and plan transform
// steps are written as Python list literals; this is their one parser.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_INTEGERLIST_H
#define AOA_IR_INTEGERLIST_H

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace aoa {

/// Parses `[a, b, ...]`: optional signs, whitespace anywhere between tokens,
/// one trailing comma (as Python allows), `[]` for the empty list. Values
/// beyond 2^40 saturate there (any check on them rejects them later).
/// nullopt on anything else.
std::optional<std::vector<int64_t>> parseIntegerList(std::string_view text);

} // namespace aoa

#endif // AOA_IR_INTEGERLIST_H
