//===- SharedString.h - Immutable strings shared between owners -*- C++ -*-===//
//
// A plan names a million stored tensors by checkpoint key and in-file name,
// mostly the same few hundred thousand strings over and over (every shard of
// a key repeats it, and a name is usually its key). A SharedString is one
// pointer to an immutable string that all its copies share, so a plan keeps
// each distinct string once (SharedStringPool hands out the same one for the
// same text) and a stored tensor pays 8 bytes per name instead of a
// std::string and its heap block (the count lives beside the string: one
// pointer, where a shared_ptr is two). It reads like a const std::string.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_SHAREDSTRING_H
#define AOA_IR_SHAREDSTRING_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>

namespace aoa {

class SharedString {
public:
  SharedString() = default;
  /// A string of its own (not shared with equal text made elsewhere; use a
  /// SharedStringPool for that).
  SharedString(std::string text)
      : text_(text.empty() ? nullptr : new Counted(std::move(text))) {}
  SharedString(const char *text) : SharedString(std::string(text)) {}
  explicit SharedString(std::string_view text)
      : SharedString(std::string(text)) {}

  const std::string &str() const { return text_ ? text_->text : emptyText(); }
  operator const std::string &() const { return str(); }
  operator std::string_view() const { return str(); }

  bool empty() const { return str().empty(); }
  size_t size() const { return str().size(); }
  const char *data() const { return str().data(); }
  const char *c_str() const { return str().c_str(); }
  /// True when both share one string (not only equal text).
  bool sharesWith(const SharedString &other) const {
    return text_ == other.text_;
  }

  friend bool operator==(const SharedString &a, const SharedString &b) {
    return a.text_ == b.text_ || a.str() == b.str();
  }
  friend bool operator!=(const SharedString &a, const SharedString &b) {
    return !(a == b);
  }
  friend bool operator<(const SharedString &a, const SharedString &b) {
    return a.str() < b.str();
  }
  // Comparisons with text, without making a SharedString of it.
  friend bool operator==(const SharedString &a, std::string_view b) {
    return std::string_view(a.str()) == b;
  }
  friend bool operator==(const SharedString &a, const std::string &b) {
    return a.str() == b;
  }
  friend bool operator==(const SharedString &a, const char *b) {
    return a.str() == b;
  }
  template <typename Text>
  friend bool operator==(const Text &a, const SharedString &b) {
    return b == a;
  }
  template <typename Text>
  friend bool operator!=(const SharedString &a, const Text &b) {
    return !(a == b);
  }
  template <typename Text>
  friend bool operator!=(const Text &a, const SharedString &b) {
    return !(b == a);
  }
  friend std::string operator+(const SharedString &a, std::string_view b) {
    std::string joined(a.str());
    joined.append(b);
    return joined;
  }
  friend std::string operator+(std::string_view a, const SharedString &b) {
    std::string joined(a);
    joined.append(b.str());
    return joined;
  }
  friend std::ostream &operator<<(std::ostream &os, const SharedString &s) {
    return os << s.str();
  }

private:
  static const std::string &emptyText() {
    static const std::string kEmpty;
    return kEmpty;
  }

  /// Counted atomically: copies on several threads share one string.
  struct Counted : llvm::ThreadSafeRefCountedBase<Counted> {
    explicit Counted(std::string text) : text(std::move(text)) {}
    const std::string text;
  };
  llvm::IntrusiveRefCntPtr<const Counted> text_; ///< null for ""
};

/// Hands out one SharedString per distinct text.
class SharedStringPool {
public:
  SharedString intern(std::string_view text) {
    auto found = strings_.find(text);
    if (found != strings_.end())
      return found->second;
    SharedString shared{std::string(text)};
    // The key views the shared string's own bytes, which never move.
    strings_.emplace(std::string_view(shared.str()), shared);
    return shared;
  }
  size_t size() const { return strings_.size(); }

private:
  std::unordered_map<std::string_view, SharedString> strings_;
};

} // namespace aoa

namespace std {
template <> struct hash<aoa::SharedString> {
  size_t operator()(const aoa::SharedString &s) const {
    return hash<string_view>()(s.str());
  }
};
} // namespace std

#endif // AOA_IR_SHAREDSTRING_H
