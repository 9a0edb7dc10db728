//===- IdPartition.h - Layer and expert ids over a mesh axis ----*- C++ -*-===//
//
// Pipeline stages hold contiguous ranges of layers, and expert-parallel ranks
// contiguous ranges of experts. An IdPartition says which part (an index
// along a mesh axis) holds each id 0 .. count-1: split evenly (the first
// count % parts parts hold one id more, as numpy.array_split does), or by
// explicit inclusive ranges [first, last], one per part, that cover 0 ..
// count-1 in order without gaps or overlaps.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_IDPARTITION_H
#define AOA_IR_IDPARTITION_H

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aoa {

/// A partition that cannot be made; `range` is the offending range, if one
/// is at fault.
struct IdPartitionError {
  std::string message;
  std::string hint;
  std::optional<size_t> range;
};

class IdPartition {
public:
  /// `count` ids (>= 0) over `parts` parts (>= 1).
  static IdPartition even(int64_t count, int64_t parts);
  /// Inclusive ranges, one per part: the first starts at 0, each next one
  /// right after the previous one's last id, and none is empty.
  static std::optional<IdPartition>
  fromRanges(llvm::ArrayRef<std::pair<int64_t, int64_t>> ranges,
             IdPartitionError *error = nullptr);

  int64_t count() const { return begins_.back(); }
  size_t parts() const { return begins_.size() - 1; }
  /// The part holding `id`; nullopt when id is outside 0 .. count-1.
  std::optional<int64_t> partOf(int64_t id) const;
  /// Part `part`'s ids, [first, end).
  std::pair<int64_t, int64_t> idsOf(size_t part) const {
    return {begins_[part], begins_[part + 1]};
  }

private:
  /// parts() + 1 ascending boundaries: part p holds [begins_[p],
  /// begins_[p+1]).
  std::vector<int64_t> begins_{0};
};

} // namespace aoa

#endif // AOA_IR_IDPARTITION_H
