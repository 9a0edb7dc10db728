//===- Box.cpp ------------------------------------------------------------===//
#include "aoa/ir/Box.h"

#include <algorithm>

namespace aoa {

std::optional<Interval> intersect(const Interval &a, const Interval &b) {
  Interval common{std::max(a.begin, b.begin), std::min(a.end, b.end)};
  if (common.isEmpty())
    return std::nullopt;
  return common;
}

Box::Box(llvm::ArrayRef<int64_t> offset, llvm::ArrayRef<int64_t> shape) {
  size_t rank = std::min(offset.size(), shape.size());
  dims_ = InlineIntervals(rank);
  for (size_t i = 0; i < rank; ++i)
    dims_[i] = Interval{offset[i], offset[i] + shape[i]};
}

std::optional<Box> Box::fromOffsetShape(llvm::ArrayRef<int64_t> offset,
                                        llvm::ArrayRef<int64_t> shape) {
  if (offset.size() != shape.size())
    return std::nullopt;
  if (std::any_of(shape.begin(), shape.end(), [](int64_t e) { return e < 0; }))
    return std::nullopt;
  return Box(offset, shape);
}

Box Box::fromShape(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> origin(shape.size(), 0);
  return Box(origin, shape);
}

int64_t Box::volume() const {
  int64_t volume = 1;
  for (const Interval &d : dims_)
    volume *= d.size();
  return volume;
}

bool Box::isEmpty() const {
  return std::any_of(dims_.begin(), dims_.end(),
                     [](const Interval &d) { return d.isEmpty(); });
}

std::vector<int64_t> Box::offsets() const {
  std::vector<int64_t> result;
  result.reserve(rank());
  for (const Interval &d : dims_)
    result.push_back(d.begin);
  return result;
}

std::vector<int64_t> Box::shape() const {
  std::vector<int64_t> result;
  result.reserve(rank());
  for (const Interval &d : dims_)
    result.push_back(d.size());
  return result;
}

bool Box::hasShape(llvm::ArrayRef<int64_t> extents) const {
  if (extents.size() != rank())
    return false;
  for (size_t i = 0; i < rank(); ++i)
    if (dims_[i].size() != extents[i])
      return false;
  return true;
}

bool Box::contains(const Box &other) const {
  if (other.rank() != rank())
    return false;
  if (other.isEmpty())
    return true;
  for (size_t i = 0; i < rank(); ++i)
    if (other.dims_[i].begin < dims_[i].begin ||
        other.dims_[i].end > dims_[i].end)
      return false;
  return true;
}

bool Box::containsPoint(llvm::ArrayRef<int64_t> coords) const {
  if (coords.size() != rank())
    return false;
  for (size_t i = 0; i < rank(); ++i)
    if (!dims_[i].contains(coords[i]))
      return false;
  return true;
}

Box Box::translate(llvm::ArrayRef<int64_t> delta) const {
  Box moved = *this;
  size_t common = std::min(delta.size(), rank());
  for (size_t i = 0; i < common; ++i) {
    moved.dims_[i].begin += delta[i];
    moved.dims_[i].end += delta[i];
  }
  return moved;
}

Box Box::relativeTo(const Box &frame) const {
  Box moved = *this;
  size_t common = std::min(frame.rank(), rank());
  for (size_t i = 0; i < common; ++i) {
    moved.dims_[i].begin -= frame.dims_[i].begin;
    moved.dims_[i].end -= frame.dims_[i].begin;
  }
  return moved;
}

std::string Box::toString() const {
  std::string text = "[";
  for (size_t i = 0; i < rank(); ++i) {
    if (i != 0)
      text += ", ";
    text += std::to_string(dims_[i].begin);
    text += ':';
    text += std::to_string(dims_[i].end);
  }
  text += ']';
  return text;
}

std::optional<Box> intersect(const Box &a, const Box &b) {
  if (a.rank() != b.rank())
    return std::nullopt;
  llvm::SmallVector<Interval, 4> dims;
  dims.reserve(a.rank());
  for (size_t i = 0; i < a.rank(); ++i) {
    std::optional<Interval> common = intersect(a.dim(i), b.dim(i));
    if (!common)
      return std::nullopt;
    dims.push_back(*common);
  }
  return Box(dims);
}

std::vector<Box> subtract(const Box &a, const Box &b) {
  if (a.isEmpty())
    return {};
  std::optional<Box> common = intersect(a, b);
  if (!common)
    return {a};
  // Peel the parts of `rest` below and above the common interval off each
  // dimension in turn; what is left at the end is the common box.
  std::vector<Box> pieces;
  llvm::SmallVector<Interval, 4> rest(a.dims().begin(), a.dims().end());
  for (size_t d = 0; d < a.rank(); ++d) {
    const Interval &keep = common->dim(d);
    if (rest[d].begin < keep.begin) {
      llvm::SmallVector<Interval, 4> below = rest;
      below[d] = Interval{rest[d].begin, keep.begin};
      pieces.emplace_back(below);
    }
    if (keep.end < rest[d].end) {
      llvm::SmallVector<Interval, 4> above = rest;
      above[d] = Interval{keep.end, rest[d].end};
      pieces.emplace_back(above);
    }
    rest[d] = keep;
  }
  return pieces;
}

std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i)
    strides[i - 2] = strides[i - 1] * shape[i - 1];
  return strides;
}

std::optional<int64_t> rowMajorIndex(const Box &frame,
                                     llvm::ArrayRef<int64_t> coords) {
  if (!frame.containsPoint(coords))
    return std::nullopt;
  int64_t index = 0;
  for (size_t i = 0; i < frame.rank(); ++i)
    index = index * frame.dim(i).size() + (coords[i] - frame.dim(i).begin);
  return index;
}

std::optional<std::vector<int64_t>> rowMajorCoords(const Box &frame,
                                                   int64_t index) {
  if (index < 0 || index >= frame.volume())
    return std::nullopt;
  std::vector<int64_t> coords(frame.rank());
  for (size_t i = frame.rank(); i > 0; --i) {
    const Interval &d = frame.dim(i - 1);
    coords[i - 1] = d.begin + index % d.size();
    index /= d.size();
  }
  return coords;
}

} // namespace aoa
