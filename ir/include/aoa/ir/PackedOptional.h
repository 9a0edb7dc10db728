//===- PackedOptional.h - An optional without a flag ------------*- C++ -*-===//
//
// A plan stores millions of tensors, each with two optional ranges (a flat
// range, data offsets): std::optional pads each 16-byte range to 24 bytes
// for its flag. A PackedOptional spends no flag: one value no range can
// take, PackedNone<T>::value(), stands for "none" (the readers of plan files
// refuse it as a present value). It reads like std::optional.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_PACKEDOPTIONAL_H
#define AOA_IR_PACKEDOPTIONAL_H

#include <optional>

namespace aoa {

/// Specialized for each T a PackedOptional holds: `static T value()`.
template <typename T> struct PackedNone;

template <typename T> class PackedOptional {
public:
  PackedOptional() = default;
  PackedOptional(std::nullopt_t) {}
  /// Precondition: `value` is not PackedNone<T>::value() (it would read as
  /// none).
  PackedOptional(const T &value) : value_(value) {}
  PackedOptional(const std::optional<T> &value)
      : value_(value ? *value : PackedNone<T>::value()) {}

  bool has_value() const { return !(value_ == PackedNone<T>::value()); }
  explicit operator bool() const { return has_value(); }
  const T &operator*() const { return value_; }
  T &operator*() { return value_; }
  const T *operator->() const { return &value_; }
  T *operator->() { return &value_; }
  void reset() { value_ = PackedNone<T>::value(); }
  operator std::optional<T>() const {
    return has_value() ? std::optional<T>(value_) : std::nullopt;
  }

  friend bool operator==(const PackedOptional &a, const PackedOptional &b) {
    return a.value_ == b.value_; // none equals none only
  }
  friend bool operator!=(const PackedOptional &a, const PackedOptional &b) {
    return !(a == b);
  }
  // Against a std::optional, exactly (std::optional's own mixed comparisons
  // would take a PackedOptional for a value).
  friend bool operator==(const PackedOptional &a, const std::optional<T> &b) {
    return a == PackedOptional(b);
  }
  friend bool operator==(const std::optional<T> &a, const PackedOptional &b) {
    return PackedOptional(a) == b;
  }
  friend bool operator!=(const PackedOptional &a, const std::optional<T> &b) {
    return !(a == b);
  }
  friend bool operator!=(const std::optional<T> &a, const PackedOptional &b) {
    return !(a == b);
  }

private:
  T value_ = PackedNone<T>::value();
};

} // namespace aoa

#endif // AOA_IR_PACKEDOPTIONAL_H
