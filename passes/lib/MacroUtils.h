//===- MacroUtils.h - Helpers shared by the macro passes --------*- C++ -*-===//
#ifndef AOA_PASSES_LIB_MACROUTILS_H
#define AOA_PASSES_LIB_MACROUTILS_H

#include "aoa/ir/AST.h"

#include <string>
#include <string_view>
#include <vector>

namespace aoa {

/// A statement made by `pass` from `parent`: same location, the parent's
/// expansion chain plus one step, no names, tags or attributes yet.
Statement deriveStatement(const Statement &parent, const char *pass);
/// The same, with the parent's printed form given: a macro that makes many
/// statements from one parent prints it once (printStatement).
Statement deriveStatement(const Statement &parent, const char *pass,
                          const SharedString &printedParent);

/// A name made by a macro, located at `location`.
Name makeName(std::string text, SourceLocation location, bool temporary);

Attribute makeIntegerAttribute(std::string key, int64_t value,
                               SourceLocation location);
Attribute makeStringAttribute(std::string key, std::string value,
                              SourceLocation location);

/// Keys of `sortedKeys` that start with `prefix` (a binary search).
std::pair<std::vector<std::string_view>::const_iterator,
          std::vector<std::string_view>::const_iterator>
keysWithPrefix(const std::vector<std::string_view> &sortedKeys,
               std::string_view prefix);

/// True when `text` is a run of decimal digits.
bool isDigits(std::string_view text);

/// Parses a run of digits (which `isDigits` accepted) into an integer;
/// saturates instead of overflowing.
int64_t digitsValue(std::string_view digits);

} // namespace aoa

#endif
