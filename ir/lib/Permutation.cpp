//===- Permutation.cpp ----------------------------------------------------===//
#include "aoa/ir/Permutation.h"

#include "aoa/ir/IntegerList.h"

#include <algorithm>
#include <cctype>

namespace aoa {

namespace {

std::string listText(llvm::ArrayRef<int64_t> values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != 0)
      text += ", ";
    text += std::to_string(values[i]);
  }
  text += ']';
  return text;
}

void setError(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
}

/// Checks `axes` against `rank`; `quoted` is how the message names the list.
std::optional<llvm::SmallVector<unsigned, 4>>
validateAxes(llvm::ArrayRef<int64_t> axes, size_t rank,
             const std::string &quoted, std::string *error) {
  if (axes.size() != rank) {
    setError(error, "permutation " + quoted + " has " +
                        std::to_string(axes.size()) +
                        (axes.size() == 1 ? " entry" : " entries") +
                        ", but the tensor has rank " + std::to_string(rank));
    return std::nullopt;
  }
  const int64_t signedRank = static_cast<int64_t>(rank);
  llvm::SmallVector<unsigned, 4> normalized;
  llvm::SmallVector<bool, 8> seen(rank, false);
  for (int64_t axis : axes) {
    if (axis < -signedRank || axis >= signedRank) {
      setError(error, "permutation " + quoted + " names axis " +
                          std::to_string(axis) + ", out of range for rank " +
                          std::to_string(rank));
      return std::nullopt;
    }
    unsigned index = static_cast<unsigned>(axis < 0 ? axis + signedRank : axis);
    if (seen[index]) {
      setError(error, "permutation " + quoted + " names axis " +
                          std::to_string(index) + " twice");
      return std::nullopt;
    }
    seen[index] = true;
    normalized.push_back(index);
  }
  return normalized;
}


} // namespace

Permutation Permutation::identity(size_t rank) {
  Permutation p;
  for (size_t i = 0; i < rank; ++i)
    p.axes_.push_back(static_cast<unsigned>(i));
  return p;
}

Permutation Permutation::reversed(size_t rank) {
  Permutation p;
  for (size_t i = rank; i > 0; --i)
    p.axes_.push_back(static_cast<unsigned>(i - 1));
  return p;
}

std::optional<Permutation> Permutation::fromAxes(llvm::ArrayRef<int64_t> axes,
                                                 size_t rank,
                                                 std::string *error) {
  auto normalized = validateAxes(axes, rank, "'" + listText(axes) + "'", error);
  if (!normalized)
    return std::nullopt;
  Permutation p;
  p.axes_ = std::move(*normalized);
  return p;
}

std::optional<Permutation> Permutation::parse(std::string_view text,
                                              size_t rank, std::string *error) {
  std::string quoted = "'" + std::string(text) + "'";
  std::optional<std::vector<int64_t>> values = parseIntegerList(text);
  if (!values) {
    setError(error, "invalid permutation " + quoted +
                        ": expected a list of axes such as '[1, 0]'");
    return std::nullopt;
  }
  if (values->empty())
    return reversed(rank);
  auto normalized = validateAxes(*values, rank, quoted, error);
  if (!normalized)
    return std::nullopt;
  Permutation p;
  p.axes_ = std::move(*normalized);
  return p;
}

Box Permutation::apply(const Box &box) const {
  if (box.rank() != rank())
    return box;
  llvm::SmallVector<Interval, 4> dims;
  dims.reserve(rank());
  for (unsigned axis : axes_)
    dims.push_back(box.dim(axis));
  return Box(dims);
}

std::vector<int64_t> Permutation::apply(llvm::ArrayRef<int64_t> values) const {
  if (values.size() != rank())
    return values.vec();
  std::vector<int64_t> result;
  result.reserve(rank());
  for (unsigned axis : axes_)
    result.push_back(values[axis]);
  return result;
}

Permutation Permutation::inverse() const {
  Permutation inv;
  inv.axes_.resize(rank());
  for (size_t i = 0; i < rank(); ++i)
    inv.axes_[axes_[i]] = static_cast<unsigned>(i);
  return inv;
}

Permutation Permutation::then(const Permutation &next) const {
  if (next.rank() != rank())
    return *this;
  Permutation composed;
  composed.axes_.reserve(rank());
  for (unsigned axis : next.axes_)
    composed.axes_.push_back(axes_[axis]);
  return composed;
}

bool Permutation::isIdentity() const {
  for (size_t i = 0; i < rank(); ++i)
    if (axes_[i] != i)
      return false;
  return true;
}

std::string Permutation::toString() const {
  std::string text = "[";
  for (size_t i = 0; i < rank(); ++i) {
    if (i != 0)
      text += ", ";
    text += std::to_string(axes_[i]);
  }
  text += ']';
  return text;
}

} // namespace aoa
