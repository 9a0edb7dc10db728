//===- Box.h - Per-dimension half-open intervals of a tensor ----*- C++ -*-===//
//
// A Box is a rectangular region of a tensor: one half-open interval per
// dimension, in int64_t element coordinates. Shards, pieces of views and
// destination queries are all boxes, so the compiler's core reasons only about
// boxes (flattened ranges are turned into boxes at the boundary; FlatRange.h).
//
// Conventions:
//  - Row-major order: the last dimension varies fastest.
//  - A rank-0 box is a scalar and holds exactly one element.
//  - Functions that combine two boxes (or a box and coordinates) require equal
//    ranks. Ranks come from validated metadata and statements, so a mismatch is
//    a programming error; nevertheless no function here asserts on it: each one
//    documents what it answers instead (nullopt, false, or an empty result).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_BOX_H
#define AOA_IR_BOX_H

#include "aoa/ir/InlineIntervals.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aoa {

/// The common part of two intervals, or nullopt when it is empty.
std::optional<Interval> intersect(const Interval &a, const Interval &b);

class Box {
public:
  /// The rank-0 box (a scalar: one element).
  Box() = default;
  Box(const Box &) = default;
  Box &operator=(const Box &) = default;
  /// Moves never allocate (InlineIntervals.h), so they are noexcept: vectors
  /// of boxes, and of structs that hold boxes, then move their elements when
  /// they grow instead of copying them.
  Box(Box &&other) noexcept = default;
  Box &operator=(Box &&other) noexcept = default;
  explicit Box(llvm::ArrayRef<Interval> dims) : dims_(dims) {}
  /// The box [offset[i], offset[i] + shape[i]) per dimension.
  /// Precondition: offset.size() == shape.size(); extra entries of the longer
  /// vector are ignored. Use `fromOffsetShape` for unvalidated input.
  Box(llvm::ArrayRef<int64_t> offset, llvm::ArrayRef<int64_t> shape);

  /// Like the constructor, but nullopt when the sizes differ or an extent is
  /// negative (for metadata read from files).
  static std::optional<Box> fromOffsetShape(llvm::ArrayRef<int64_t> offset,
                                            llvm::ArrayRef<int64_t> shape);
  /// The box at the origin with the given shape (a whole tensor).
  static Box fromShape(llvm::ArrayRef<int64_t> shape);

  size_t rank() const { return dims_.size(); }
  const Interval &dim(size_t i) const { return dims_[i]; }
  llvm::ArrayRef<Interval> dims() const { return dims_; }

  /// Number of elements: the product of the extents (1 for rank 0, 0 when
  /// empty).
  int64_t volume() const;
  /// True when some dimension is empty. A rank-0 box is never empty.
  bool isEmpty() const;

  /// The begin of every dimension (the shard's global_offset).
  std::vector<int64_t> offsets() const;
  /// The extent of every dimension (the shard's local_shape).
  std::vector<int64_t> shape() const;
  /// True when shape() equals `extents` (without building it).
  bool hasShape(llvm::ArrayRef<int64_t> extents) const;

  /// True when every element of `other` lies in this box; an empty `other` is
  /// contained in any box of its rank. False when the ranks differ.
  bool contains(const Box &other) const;
  /// True when the point lies in this box. False when the ranks differ.
  bool containsPoint(llvm::ArrayRef<int64_t> coords) const;

  /// This box moved by `delta` (added to both ends of every dimension).
  /// Precondition: delta.size() == rank(); dimensions without a delta entry
  /// stay where they are.
  Box translate(llvm::ArrayRef<int64_t> delta) const;
  /// This box in the frame whose origin is `frame`'s begin (translation by
  /// minus frame.offsets()), e.g. a global region rebased into a shard.
  /// Precondition: equal ranks, as for translate.
  Box relativeTo(const Box &frame) const;

  /// Text for diagnostics: `[0:4, 2:3]`; `[]` for rank 0.
  std::string toString() const;

  friend bool operator==(const Box &a, const Box &b) {
    return a.dims() == b.dims();
  }
  friend bool operator!=(const Box &a, const Box &b) { return !(a == b); }

private:
  /// Inline up to rank 3 (a plan and its transfers hold millions of boxes;
  /// most tensors have at most 3 axes), on the heap beyond.
  InlineIntervals dims_;
};

/// The common part of two boxes, or nullopt when it is empty in some
/// dimension. Also nullopt when the ranks differ (a programming error; see the
/// file comment). Two rank-0 boxes intersect in the rank-0 box.
std::optional<Box> intersect(const Box &a, const Box &b);

/// The elements of `a` that are not in `b`, as at most 2 * rank disjoint,
/// non-empty boxes (slabs peeled off one dimension after another). Empty
/// when `b` contains `a` or `a` is empty; {a} when they share no element
/// (which includes different ranks).
std::vector<Box> subtract(const Box &a, const Box &b);

/// Row-major strides of a shape: strides[i] = shape[i+1] * ... * shape[n-1].
std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// The row-major index of the point `coords` (global coordinates) inside
/// `frame`, i.e. its position in the flattening of `frame`. nullopt when the
/// point is outside `frame` or the ranks differ.
std::optional<int64_t> rowMajorIndex(const Box &frame,
                                     llvm::ArrayRef<int64_t> coords);

/// The global coordinates of the element at row-major `index` of `frame`.
/// nullopt when index is not in [0, frame.volume()).
std::optional<std::vector<int64_t>> rowMajorCoords(const Box &frame,
                                                   int64_t index);

} // namespace aoa

#endif // AOA_IR_BOX_H
