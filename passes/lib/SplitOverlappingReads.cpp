//===- SplitOverlappingReads.cpp - Reads identical or disjoint ------------===//
//
// Cost, for n transfers: a counting sort by source tensor; a tensor read by
// at most kFewTransfers transfers (nearly all of them) is checked pairwise
// for a partial overlap, a larger one is sorted by (rank, region). Only a
// rank's regions that do overlap partially are refined, with a sort and a
// sweep per level: O(p log p) for p pieces made. The sweep compares a box
// with the boxes still open along one axis, which is pairwise only within a
// set of boxes that all overlap there: the axis with the least average
// overlap is chosen, so a row of column pieces is swept along the columns.
// Transfers are copied only when some are cut.
//
//===----------------------------------------------------------------------===//
#include "SplitOverlappingReads.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <numeric>

namespace aoa {

namespace {

/// -1, 0, 1: lexicographic over (begin, end) of each dimension, so the
/// disjoint pieces of one region sort in row-major order.
int compareRegions(const Box &a, const Box &b) {
  for (size_t d = 0; d < a.rank(); ++d) {
    const Interval &x = a.dim(d), &y = b.dim(d);
    if (x.begin != y.begin)
      return x.begin < y.begin ? -1 : 1;
    if (x.end != y.end)
      return x.end < y.end ? -1 : 1;
  }
  return 0;
}

bool overlap(const Box &a, const Box &b) {
  for (size_t d = 0; d < a.rank(); ++d)
    if (a.dim(d).end <= b.dim(d).begin || b.dim(d).end <= a.dim(d).begin)
      return false;
  return true;
}

/// Box `box` with dimension `dim` set to `along`.
Box withDim(const Box &box, size_t dim, Interval along) {
  llvm::SmallVector<Interval, 4> dims(box.dims().begin(), box.dims().end());
  dims[dim] = along;
  return Box(dims);
}

/// The groups of `boxes` that overlap (connected through overlaps), as
/// lists of positions, ascending, in the order of their first position.
/// The boxes agree on the dimensions before `from`, so the sweep runs along
/// a later one.
std::vector<std::vector<uint32_t>>
overlapGroups(const std::vector<const Box *> &boxes, size_t from) {
  size_t count = boxes.size(), dims = boxes[0]->rank();
  // The axis along which the boxes overlap least on average (their total
  // extent over the extent they span): the sweep keeps few boxes open.
  size_t axis = from;
  double bestDepth = std::numeric_limits<double>::infinity();
  for (size_t d = from; d < dims; ++d) {
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = std::numeric_limits<int64_t>::min();
    double total = 0;
    for (const Box *box : boxes) {
      lo = std::min(lo, box->dim(d).begin);
      hi = std::max(hi, box->dim(d).end);
      total += double(box->dim(d).size());
    }
    double depth = total / double(std::max<int64_t>(hi - lo, 1));
    if (depth < bestDepth) {
      bestDepth = depth;
      axis = d;
    }
  }
  std::vector<uint32_t> sweep(count), parent(count), active;
  std::iota(sweep.begin(), sweep.end(), 0u);
  std::iota(parent.begin(), parent.end(), 0u);
  std::sort(sweep.begin(), sweep.end(), [&](uint32_t x, uint32_t y) {
    int64_t bx = boxes[x]->dim(axis).begin, by = boxes[y]->dim(axis).begin;
    return bx != by ? bx < by : x < y;
  });
  auto find = [&](uint32_t k) {
    while (parent[k] != k)
      k = parent[k] = parent[parent[k]];
    return k;
  };
  for (uint32_t k : sweep) {
    int64_t begin = boxes[k]->dim(axis).begin;
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](uint32_t open) {
                                  return boxes[open]->dim(axis).end <= begin;
                                }),
                 active.end());
    for (uint32_t open : active)
      if (overlap(*boxes[open], *boxes[k])) {
        uint32_t x = find(open), y = find(k);
        parent[std::max(x, y)] = std::min(x, y); // roots: first positions
      }
    active.push_back(k);
  }
  std::vector<std::vector<uint32_t>> groups;
  std::vector<uint32_t> groupOfRoot(count, ~0u);
  for (uint32_t k = 0; k < count; ++k) {
    uint32_t root = find(k);
    if (groupOfRoot[root] == ~0u) {
      groupOfRoot[root] = uint32_t(groups.size());
      groups.emplace_back();
    }
    groups[groupOfRoot[root]].push_back(k);
  }
  return groups;
}

class ReadSplitter {
  /// Up to this many transfers of one tensor are checked pairwise before
  /// sorting: most tensors are read by one to a few transfers.
  static constexpr size_t kFewTransfers = 8;

public:
  ReadSplitter(std::vector<Transfer> transfers,
               const TransformTable &transforms)
      : transfers_(std::move(transfers)), transforms_(transforms) {
    for (const auto &steps : transforms_.transforms)
      splittable_.push_back(plan::keepsBoxes(steps));
  }

  std::vector<Transfer> run() {
    findOverlaps();
    if (piecesOf_.empty())
      return std::move(transfers_); // nothing overlaps: the common case
    return cut();
  }

private:
  /// A piece of distinct region `region` of the rank being refined.
  struct Part {
    uint32_t region;
    Box box;
  };

  const Box &regionOf(uint32_t transfer) const {
    return transfers_[transfer].sourceRegion;
  }

  /// Transfers by source tensor, in transfer order (a counting sort: tensor
  /// ids are dense), then each tensor's overlaps.
  void findOverlaps() {
    std::vector<uint32_t> tensorOf(transfers_.size());
    uint32_t tensors = 0;
    for (size_t i = 0; i < transfers_.size(); ++i) {
      tensorOf[i] = transfers_[i].sourceTensor;
      tensors = std::max(tensors, tensorOf[i] + 1);
    }
    std::vector<uint32_t> start(size_t(tensors) + 1, 0);
    for (uint32_t tensor : tensorOf)
      ++start[tensor + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    std::vector<uint32_t> order(transfers_.size());
    std::vector<uint32_t> next(start.begin(), start.end() - 1);
    for (uint32_t i = 0; i < tensorOf.size(); ++i)
      order[next[tensorOf[i]]++] = i;
    for (uint32_t tensor = 0; tensor < tensors; ++tensor)
      if (start[tensor + 1] - start[tensor] >= 2)
        refineTensor(&order[start[tensor]], start[tensor + 1] - start[tensor]);
  }

  /// Whether two of `members` read overlapping, unequal regions on one rank.
  /// Pairwise: for the few transfers most tensors have.
  bool anyPartialOverlap(const uint32_t *members, size_t count) const {
    for (size_t i = 0; i < count; ++i)
      for (size_t j = i + 1; j < count; ++j) {
        const Transfer &a = transfers_[members[i]], &b = transfers_[members[j]];
        if (a.sourceRank == b.sourceRank &&
            overlap(a.sourceRegion, b.sourceRegion) &&
            a.sourceRegion != b.sourceRegion)
          return true;
      }
    return false;
  }

  /// `members`: the transfers of one source tensor.
  void refineTensor(uint32_t *members, size_t count) {
    if (count <= kFewTransfers && !anyPartialOverlap(members, count))
      return;
    // Equal regions next to each other, each rank's regions together.
    std::sort(members, members + count, [&](uint32_t a, uint32_t b) {
      const Transfer &x = transfers_[a], &y = transfers_[b];
      if (x.sourceRank != y.sourceRank)
        return x.sourceRank < y.sourceRank;
      int c = compareRegions(x.sourceRegion, y.sourceRegion);
      return c != 0 ? c < 0 : a < b;
    });
    // distinct[k]: where the k-th distinct (rank, region) starts.
    std::vector<uint32_t> distinct;
    for (size_t i = 0; i < count; ++i)
      if (i == 0 ||
          transfers_[members[i]].sourceRank !=
              transfers_[members[i - 1]].sourceRank ||
          regionOf(members[i]) != regionOf(members[i - 1]))
        distinct.push_back(uint32_t(i));
    size_t regions = distinct.size();
    distinct.push_back(uint32_t(count));
    for (size_t a = 0; a < regions;) {
      uint32_t rank = transfers_[members[distinct[a]]].sourceRank;
      size_t b = a + 1;
      while (b < regions && transfers_[members[distinct[b]]].sourceRank == rank)
        ++b;
      if (b - a >= 2)
        refineRank(members,
                   llvm::ArrayRef<uint32_t>(distinct).slice(a, b - a + 1));
      a = b;
    }
  }

  /// Cuts the distinct regions of one tensor and rank (region k: transfers
  /// members[distinct[k]] .. members[distinct[k + 1]] - 1) into pieces equal
  /// or disjoint, and records the pieces of every transfer that is cut.
  void refineRank(const uint32_t *members, llvm::ArrayRef<uint32_t> distinct) {
    size_t regions = distinct.size() - 1;
    std::vector<Part> parts;
    parts.reserve(regions);
    for (uint32_t k = 0; k < regions; ++k)
      parts.push_back({k, regionOf(members[distinct[k]])});
    pieces_.assign(regions, {});
    refine(parts, 0);
    for (uint32_t k = 0; k < regions; ++k) {
      std::vector<Box> &pieces = pieces_[k];
      if (pieces.size() < 2)
        continue;
      // A region read by a transfer that cannot be cut stays whole for all
      // of its transfers, so that they share its read.
      bool fixed = false;
      for (uint32_t i = distinct[k]; i < distinct[k + 1]; ++i)
        fixed |= !splittable_[transfers_[members[i]].transform];
      if (fixed)
        continue;
      std::sort(pieces.begin(), pieces.end(), [](const Box &x, const Box &y) {
        return compareRegions(x, y) < 0;
      });
      if (piecesOf_.empty())
        piecesOf_.assign(transfers_.size(), -1);
      for (uint32_t i = distinct[k]; i < distinct[k + 1]; ++i)
        piecesOf_[members[i]] = int32_t(cuts_.size());
      added_ += (distinct[k + 1] - distinct[k]) * (pieces.size() - 1);
      cuts_.push_back(std::move(pieces));
    }
  }

  /// Cuts `parts`, which agree on the dimensions before `dim`, into pieces
  /// equal or disjoint, appended to pieces_. Each group of overlapping parts
  /// is cut at all of its boundaries along `dim`; the parts in each band
  /// between two boundaries then agree on `dim` too and are refined along
  /// the next dimension. Row-major first: a band of whole rows is cut into
  /// columns only where parts in it differ, so pieces stay contiguous.
  void refine(std::vector<Part> &parts, size_t dim) {
    // Equal boxes next to each other: one box each for the sweep.
    std::sort(parts.begin(), parts.end(), [](const Part &x, const Part &y) {
      int c = compareRegions(x.box, y.box);
      return c != 0 ? c < 0 : x.region < y.region;
    });
    std::vector<uint32_t> firstOf; // of each distinct box, and the end
    std::vector<const Box *> boxes;
    for (uint32_t i = 0; i < parts.size(); ++i)
      if (i == 0 || parts[i].box != parts[i - 1].box) {
        firstOf.push_back(i);
        boxes.push_back(&parts[i].box);
      }
    firstOf.push_back(uint32_t(parts.size()));
    auto keep = [&](uint32_t b) {
      for (uint32_t i = firstOf[b]; i < firstOf[b + 1]; ++i)
        pieces_[parts[i].region].push_back(parts[i].box);
    };
    if (boxes.size() == 1) {
      keep(0);
      return;
    }
    size_t dims = boxes[0]->rank();
    for (const std::vector<uint32_t> &group : overlapGroups(boxes, dim)) {
      if (group.size() == 1) {
        keep(group[0]);
        continue;
      }
      std::vector<int64_t> lines;
      for (uint32_t b : group) {
        lines.push_back(boxes[b]->dim(dim).begin);
        lines.push_back(boxes[b]->dim(dim).end);
      }
      std::sort(lines.begin(), lines.end());
      lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
      // bands[k]: the parts between lines[k] and lines[k + 1].
      std::vector<std::vector<Part>> bands(lines.size() - 1);
      for (uint32_t b : group)
        for (uint32_t i = firstOf[b]; i < firstOf[b + 1]; ++i) {
          const Part &part = parts[i];
          const Interval &along = part.box.dim(dim);
          size_t k =
              size_t(std::lower_bound(lines.begin(), lines.end(), along.begin) -
                     lines.begin());
          for (; lines[k] < along.end; ++k)
            bands[k].push_back(
                {part.region,
                 withDim(part.box, dim, {lines[k], lines[k + 1]})});
        }
      for (std::vector<Part> &band : bands) {
        if (band.empty())
          continue;
        if (dim + 1 == dims) {
          // The parts of a band agree on every dimension: equal.
          for (Part &part : band)
            pieces_[part.region].push_back(std::move(part.box));
          continue;
        }
        refine(band, dim + 1);
      }
    }
  }

  std::vector<Transfer> cut() {
    std::vector<Transfer> out;
    out.reserve(transfers_.size() + added_);
    for (size_t i = 0; i < transfers_.size(); ++i) {
      if (piecesOf_[i] < 0)
        out.push_back(std::move(transfers_[i]));
      else
        appendPieces(transfers_[i], cuts_[size_t(piecesOf_[i])], out);
    }
    return out;
  }

  /// Transfer t cut into `pieces` (sub-boxes of its source region that tile
  /// it), each with the destination sub-box its elements go to.
  void appendPieces(const Transfer &t, const std::vector<Box> &pieces,
                    std::vector<Transfer> &out) const {
    const Box &source = t.sourceRegion, &destination = t.destinationRegion;
    size_t dims = source.rank();
    assert(destination.rank() == dims && "a transform that keeps boxes");
    Permutation p =
        plan::composedPermutation(transforms_.transforms[t.transform], dims);
    llvm::SmallVector<Interval, 4> dst(dims);
    for (const Box &piece : pieces) {
      for (size_t i = 0; i < dims; ++i) {
        // Destination axis i shows source axis p[i].
        int64_t shift = destination.dim(i).begin - source.dim(p[i]).begin;
        dst[i] = {piece.dim(p[i]).begin + shift, piece.dim(p[i]).end + shift};
      }
      out.push_back(Transfer{t.sourceTensor, t.destinationTensor,
                             t.sourceRank, t.destinationRank, t.transform,
                             piece, Box(dst)});
    }
  }

  std::vector<Transfer> transfers_;
  const TransformTable &transforms_;
  std::vector<bool> splittable_; ///< per transform: keeps boxes
  /// Per transfer: its pieces in cuts_, or -1 (empty when none is cut).
  std::vector<int32_t> piecesOf_;
  std::vector<std::vector<Box>> cuts_;
  size_t added_ = 0; ///< transfers the cuts add
  /// Per distinct region of the rank being refined: its pieces.
  std::vector<std::vector<Box>> pieces_;
};

} // namespace

std::vector<Transfer> splitOverlappingReads(std::vector<Transfer> transfers,
                                            const TransformTable &transforms) {
  return ReadSplitter(std::move(transfers), transforms).run();
}

} // namespace aoa
