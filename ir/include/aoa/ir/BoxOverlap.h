//===- BoxOverlap.h - Finding two boxes that share elements -----*- C++ -*-===//
//
// Coverage checks (the compiler's verify pass, the plan verifier's check of a
// plan's writes) need to know whether regions written into one tensor are
// pairwise disjoint. Sorting by the first axis and sweeping compares only
// boxes whose first-axis intervals overlap: near linear for the row bands
// and column strips that layouts produce.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_BOXOVERLAP_H
#define AOA_IR_BOXOVERLAP_H

#include "aoa/ir/Box.h"

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace aoa {

/// The positions in `boxes` of two boxes that share elements (the first such
/// pair found), or nullopt when the boxes are pairwise disjoint. Boxes of
/// rank 0 are single elements; empty boxes overlap nothing.
std::optional<std::pair<size_t, size_t>>
findOverlappingPair(const std::vector<const Box *> &boxes);

/// The elements the pair findOverlappingPair finds shares, or nullopt.
std::optional<Box> findOverlap(const std::vector<const Box *> &boxes);

/// Sorts `boxes` (by their intervals, axis by axis) and drops repeats: the
/// distinct boxes a layout stores, replicas counted once. Sorting beats a
/// map keyed by boxes on a million shards.
void sortAndRemoveDuplicates(std::vector<Box> &boxes);

} // namespace aoa

#endif // AOA_IR_BOXOVERLAP_H
