//===- Text.h - Wording shared by the formats library -----------*- C++ -*-===//
//
// Private to the formats library: names are quoted alike in every message
// (control characters shown as \xNN, so a corrupt name cannot garble the
// terminal), paths are joined alike, and JSON positions are line:column.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_LIB_TEXT_H
#define AOA_FORMATS_LIB_TEXT_H

#include <cstddef>
#include <string>
#include <string_view>

namespace aoa::formats {

/// 'name', with control characters as \xNN.
std::string quote(std::string_view name);

/// DIRECTORY/NAME (no doubled slash).
std::string joinPath(std::string_view directory, std::string_view name);

/// "LINE:COLUMN" (both from 1) of byte `offset` in `text`.
std::string lineColumn(std::string_view text, size_t offset);

/// A name the directory may hold: not empty, relative, without "." or ".."
/// components or NUL bytes.
bool isSafeRelativePath(std::string_view path);

} // namespace aoa::formats

#endif // AOA_FORMATS_LIB_TEXT_H
