//===- LayoutFilePattern.h - The file each rank writes ----------*- C++ -*-===//
#ifndef AOA_FORMATS_METADATA_LIB_LAYOUTFILEPATTERN_H
#define AOA_FORMATS_METADATA_LIB_LAYOUTFILEPATTERN_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

/// `'text'`, cut after 200 characters, for messages.
inline std::string quoteText(std::string_view text) {
  constexpr size_t kMaxShown = 200;
  if (text.size() > kMaxShown)
    return "'" + std::string(text.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(text) + "'";
}

/// file_pattern: literal text with `{rank}` or `{rank:0Nd}` placeholders.
class FilePattern {
public:
  /// nullopt and a message for anything else in braces.
  static std::optional<FilePattern> parse(std::string_view text,
                                          std::string &error) {
    FilePattern pattern;
    size_t at = 0;
    while (at < text.size()) {
      size_t open = text.find_first_of("{}", at);
      pattern.pieces_.push_back({std::string(text.substr(at, open - at)), -1});
      if (open == std::string_view::npos)
        break;
      size_t close = text.find('}', open);
      if (text[open] == '}' || close == std::string_view::npos) {
        error = "unbalanced brace in file_pattern " + quoteText(text);
        return std::nullopt;
      }
      llvm::StringRef field(text.data() + open + 1, close - open - 1);
      int width = 0;
      if (field != "rank") {
        // Python's zero-padded form: rank:05d.
        llvm::StringRef spec = field;
        bool padded = spec.consume_front("rank:0") && spec.consume_back("d") &&
                      !spec.getAsInteger(10, width);
        if (!padded || width < 1 || width > 20) {
          error = "unsupported placeholder {" + field.str() +
                  "} in file_pattern " + quoteText(text);
          return std::nullopt;
        }
      }
      pattern.pieces_.push_back({{}, width});
      pattern.mentionsRank_ = true;
      at = close + 1;
    }
    return pattern;
  }

  std::string format(uint32_t rank) const {
    std::string out;
    for (const Piece &piece : pieces_) {
      if (piece.width < 0) {
        out += piece.literal;
        continue;
      }
      std::string digits = std::to_string(rank);
      if (digits.size() < static_cast<size_t>(piece.width))
        out.append(static_cast<size_t>(piece.width) - digits.size(), '0');
      out += digits;
    }
    return out;
  }
  bool mentionsRank() const { return mentionsRank_; }

private:
  struct Piece {
    std::string literal;
    int width; ///< < 0: literal; otherwise the rank, zero-padded to width
  };
  std::vector<Piece> pieces_;
  bool mentionsRank_ = false;
};

} // namespace aoa

#endif // AOA_FORMATS_METADATA_LIB_LAYOUTFILEPATTERN_H
