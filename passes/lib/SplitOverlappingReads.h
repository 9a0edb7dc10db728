//===- SplitOverlappingReads.h - Reads identical or disjoint ----*- C++ -*-===//
//
// schedule shares one read among the transfers that read the same region of
// a source tensor on the same rank. Regions that overlap without being equal
// (a column split of a tensor that is also copied whole, destination replicas
// cut into different flat ranges, pieces of cutLarge along different axes)
// would still read their common bytes once per region. This step cuts such
// transfers so that sharing equal regions is enough: afterwards any two
// source regions of one tensor on one rank are identical or disjoint.
//
// Transfers of one source tensor and rank are sorted by region; groups of
// regions that overlap are found with a sweep, and each group is cut at all
// of its region boundaries along the first dimension. The parts in each band
// between two boundaries then agree on that dimension and are refined in the
// same way along the next one, down to the last, after which the parts of a
// band are equal. Rows first keeps pieces contiguous in row-major storage: a
// band of whole rows is cut into columns only where the regions in it differ
// (a whole region beside flat ranges that start mid-row is cut into whole
// rows and the two partial rows, not into a grid). A piece of a source
// region maps to a piece of the destination region through the transform's
// composed permutation.
//
// Limit: a transfer whose transform reshapes or flattens cannot be cut (a
// sub-box of its source is not a sub-box of its destination), so its region
// stays whole, for every transfer that reads that region. Its boundaries
// still cut the others, so pieces equal to its region share its read; the
// bytes it has in common with pieces that differ from its region are read
// twice.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_LIB_SPLITOVERLAPPINGREADS_H
#define AOA_PASSES_LIB_SPLITOVERLAPPINGREADS_H

#include "aoa/passes/Transfer.h"

#include <vector>

namespace aoa {

/// Cuts `transfers` so that on every rank any two transfers reading one
/// source tensor read identical or disjoint regions, except where one of them
/// reshapes (see the file comment). Each transfer is replaced, in place, by
/// its pieces in row-major order of its source region; transfers that need
/// no cut keep their position, so the result depends on the input alone.
std::vector<Transfer> splitOverlappingReads(std::vector<Transfer> transfers,
                                            const TransformTable &transforms);

} // namespace aoa

#endif // AOA_PASSES_LIB_SPLITOVERLAPPINGREADS_H
