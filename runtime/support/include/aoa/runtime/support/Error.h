//===- Error.h - Failures of runtime operations as values -------*- C++ -*-===//
//
// The runtime reports every failure (a corrupt file, a full disk, a region
// outside its buffer) as a value: an Error with a message that names the file,
// the tensor and what is wrong, and a hint that says what to do about it.
// Nothing in the runtime's API aborts, asserts or throws on bad input.
//
//   Status: success, or an Error.
//   Expected<T>: a T, or an Error.
//
// Both are [[nodiscard]] so that a failure cannot be dropped by accident.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SUPPORT_ERROR_H
#define AOA_RUNTIME_SUPPORT_ERROR_H

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace aoa::runtime {

struct Error {
  /// What went wrong, naming the file and the tensor where there is one.
  std::string message;
  /// What to do about it; may be empty.
  std::string hint;

  /// "message" followed by "\nhint: hint" when there is a hint.
  std::string toString() const;
};

class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}

  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  /// Precondition: !ok().
  const Error &error() const { return *error_; }

private:
  std::optional<Error> error_;
};

template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : storage_(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return storage_.index() == 0; }
  explicit operator bool() const { return ok(); }

  /// Precondition: ok().
  T &operator*() & { return std::get<0>(storage_); }
  const T &operator*() const & { return std::get<0>(storage_); }
  T &&operator*() && { return std::get<0>(std::move(storage_)); }
  T *operator->() { return &std::get<0>(storage_); }
  const T *operator->() const { return &std::get<0>(storage_); }

  /// Precondition: !ok().
  const Error &error() const { return std::get<1>(storage_); }
  /// The outcome without the value (to pass a failure on).
  Status status() const { return ok() ? Status() : Status(error()); }

private:
  std::variant<T, Error> storage_;
};

/// The text of an errno value ("No space left on device"), thread-safe.
std::string errnoText(int errnoValue);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SUPPORT_ERROR_H
