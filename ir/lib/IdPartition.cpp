//===- IdPartition.cpp ----------------------------------------------------===//
#include "aoa/ir/IdPartition.h"

#include <algorithm>

namespace aoa {

IdPartition IdPartition::even(int64_t count, int64_t parts) {
  IdPartition partition;
  count = std::max<int64_t>(count, 0);
  parts = std::max<int64_t>(parts, 1);
  int64_t base = count / parts, extra = count % parts;
  for (int64_t part = 0; part < parts; ++part)
    partition.begins_.push_back(partition.begins_.back() + base +
                                (part < extra ? 1 : 0));
  return partition;
}

std::optional<IdPartition>
IdPartition::fromRanges(llvm::ArrayRef<std::pair<int64_t, int64_t>> ranges,
                        IdPartitionError *error) {
  auto fail = [&](std::string message, std::string hint,
                  std::optional<size_t> range) {
    if (error)
      *error = IdPartitionError{std::move(message), std::move(hint), range};
    return std::nullopt;
  };
  if (ranges.empty())
    return fail("no ranges are given", "give one [first, last] per index",
                std::nullopt);
  IdPartition partition;
  for (size_t i = 0; i < ranges.size(); ++i) {
    auto [first, last] = ranges[i];
    std::string shown = "range " + std::to_string(i) + " [" +
                        std::to_string(first) + ", " + std::to_string(last) +
                        "]";
    int64_t expected = partition.begins_.back();
    if (last < first)
      return fail(shown + " is empty: its last id is below its first",
                  "ranges are inclusive, [first, last] with first <= last", i);
    if (first < expected)
      return fail(
          shown + " overlaps " +
              (i == 0 ? std::string("nothing valid: ids start at 0")
                      : "range " + std::to_string(i - 1) + ", which ends at " +
                            std::to_string(expected - 1)),
          "ranges are inclusive; start this one at " + std::to_string(expected),
          i);
    if (first > expected)
      return fail(shown + " leaves " +
                      (first - expected == 1
                           ? "id " + std::to_string(expected)
                           : "ids " + std::to_string(expected) + " to " +
                                 std::to_string(first - 1)) +
                      " in no range",
                  "start this range at " + std::to_string(expected), i);
    if (last == INT64_MAX)
      return fail(shown + " is too large", "check the range", i);
    partition.begins_.push_back(last + 1);
  }
  return partition;
}

std::optional<int64_t> IdPartition::partOf(int64_t id) const {
  if (id < 0 || id >= count())
    return std::nullopt;
  // The last boundary <= id.
  auto it = std::upper_bound(begins_.begin(), begins_.end(), id);
  return static_cast<int64_t>(it - begins_.begin()) - 1;
}

} // namespace aoa
