//===- JsonLocator.h - Where a JSON value is in its text --------*- C++ -*-===//
//
// nlohmann's DOM keeps no source positions, so loaders that use it (through
// JsonSupport.h) find the place of a value, for a diagnostic, by walking the
// text again along the value's path. This only runs when something is
// reported, and only over text that has already parsed.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_JSON_JSONLOCATOR_H
#define AOA_FORMATS_JSON_JSONLOCATOR_H

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aoa {

/// One step from a JSON value to a child: an object member or an element.
struct JsonPathStep {
  std::string key;
  size_t index = 0;
  bool isIndex = false;

  static JsonPathStep member(std::string key) {
    return JsonPathStep{std::move(key), 0, false};
  }
  static JsonPathStep element(size_t index) {
    return JsonPathStep{{}, index, true};
  }
};

class JsonLocator {
public:
  /// `text` must be valid JSON (it has parsed) and outlive the locator.
  explicit JsonLocator(std::string_view text) : text_(text) {}

  /// The offset of the value at `path`. Where the path leaves the document,
  /// the offset of the deepest value on it.
  size_t valueOffset(llvm::ArrayRef<JsonPathStep> path) const {
    return find(path).second;
  }
  /// The offset of the opening quote of the key the path ends at; the
  /// value's offset when it ends at an array element (or at the root).
  size_t keyOffset(llvm::ArrayRef<JsonPathStep> path) const {
    return find(path).first;
  }
  /// keyOffset of `path` taken from the value at offset `from` (an offset
  /// this locator returned) instead of from the root.
  size_t keyOffsetFrom(size_t from, llvm::ArrayRef<JsonPathStep> path) const {
    return find(path, from).first;
  }

  /// The value offsets of every element of the array at `path`, in one walk
  /// of it (empty when there is no array there): locating element i of a
  /// long array with keyOffset walks the i elements before it each time.
  std::vector<size_t> elementOffsets(llvm::ArrayRef<JsonPathStep> path) const;

  /// A key given twice in one object (nlohmann keeps only one of them).
  struct DuplicateKey {
    std::string key;
    size_t offset = 0;      ///< the second occurrence
    size_t firstOffset = 0; ///< the first
  };
  /// The first repeated key in document order, if any.
  std::optional<DuplicateKey> firstDuplicateKey() const;

private:
  /// (key offset, value offset) of the deepest value on `path`.
  std::pair<size_t, size_t> find(llvm::ArrayRef<JsonPathStep> path) const {
    return find(path, skipSpace(0));
  }
  std::pair<size_t, size_t> find(llvm::ArrayRef<JsonPathStep> path,
                                 size_t from) const;
  /// The value offset of element `index` of the array at `at`.
  std::optional<size_t> findElement(size_t at, size_t index) const;
  /// (key offset, value offset) of member `key` of the object at `at`.
  std::optional<std::pair<size_t, size_t>>
  findMember(size_t at, std::string_view key) const;
  char charAt(size_t at) const { return at < text_.size() ? text_[at] : '\0'; }
  size_t skipSpace(size_t at) const;
  /// Past the end of the string whose opening quote is at `at`.
  size_t skipString(size_t at) const;
  size_t skipValue(size_t at) const;
  /// The unescaped text of the string token [begin, end).
  std::string decodeString(size_t begin, size_t end) const;

  std::string_view text_;
};

} // namespace aoa

#endif // AOA_FORMATS_JSON_JSONLOCATOR_H
