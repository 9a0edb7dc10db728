//===- Permutation.h - Axis permutations of tensors and boxes ---*- C++ -*-===//
//
// A permutation P of the axes 0..rank-1 with the Paddle reference's meaning:
// applying P to a shape, a box or coordinates gives new[i] = old[P[i]]; the
// result's axis i is the input's axis P[i]. So for a 2-D tensor [1, 0] is the
// transpose, and `permute = "[]"` means "reverse all axes" (reversed(rank)).
//
// Permutations are values: construction validates, so every Permutation is a
// bijection of 0..rank-1 and apply() only needs equal ranks.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_PERMUTATION_H
#define AOA_IR_PERMUTATION_H

#include "aoa/ir/Box.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

class Permutation {
public:
  /// The identity of rank 0.
  Permutation() = default;

  static Permutation identity(size_t rank);
  /// [rank-1, ..., 1, 0]: Paddle's `permute = "[]"` and `X^T`.
  static Permutation reversed(size_t rank);

  /// Validates a list of axes for a tensor of `rank`: negative entries count
  /// from the end (-1 is rank-1); the list must have `rank` entries, each in
  /// [-rank, rank), each axis once. On failure returns nullopt and, when
  /// `error` is given, stores a message that quotes the list.
  static std::optional<Permutation> fromAxes(llvm::ArrayRef<int64_t> axes,
                                             size_t rank,
                                             std::string *error = nullptr);

  /// Parses a Python list literal of integers, e.g. "[1, 0]", "[2,0,1]",
  /// "[-1, 0]" (whitespace and one trailing comma allowed, as in Python).
  /// "[]" is the full reversal of `rank` axes. Otherwise as fromAxes.
  static std::optional<Permutation> parse(std::string_view text, size_t rank,
                                          std::string *error = nullptr);

  size_t rank() const { return axes_.size(); }
  /// The input axis that becomes output axis `i`.
  unsigned operator[](size_t i) const { return axes_[i]; }
  llvm::ArrayRef<unsigned> axes() const { return axes_; }

  /// new[i] = box.dim(P[i]). Precondition: box.rank() == rank(); a box of
  /// another rank is returned unchanged.
  Box apply(const Box &box) const;
  /// new[i] = values[P[i]] (a shape, an offset or a point). Precondition:
  /// values.size() == rank(); other values are returned unchanged.
  std::vector<int64_t> apply(llvm::ArrayRef<int64_t> values) const;

  /// The permutation that undoes this one (the argsort of the axes):
  /// inverse().apply(apply(x)) == x.
  Permutation inverse() const;

  /// The permutation that applies this one first and then `next`:
  /// then(next).apply(x) == next.apply(apply(x)), i.e. result[i] =
  /// (*this)[next[i]]. This is the order of a postprocess list ["P1", "P2"].
  /// Precondition: next.rank() == rank(); otherwise returns *this.
  Permutation then(const Permutation &next) const;

  bool isIdentity() const;

  /// Canonical text in Python list style: "[1, 0]", "[2, 0, 1]", "[]" for
  /// rank 0. This is the spelling of the reference's postprocess strings.
  std::string toString() const;

  friend bool operator==(const Permutation &a, const Permutation &b) {
    return a.axes() == b.axes();
  }
  friend bool operator!=(const Permutation &a, const Permutation &b) {
    return !(a == b);
  }

private:
  llvm::SmallVector<unsigned, 4> axes_;
};

} // namespace aoa

#endif // AOA_IR_PERMUTATION_H
