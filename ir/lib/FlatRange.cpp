//===- FlatRange.cpp ------------------------------------------------------===//
#include "aoa/ir/FlatRange.h"

#include <algorithm>

namespace aoa {

namespace {

/// Splits a flat range of `outer` into boxes, recursing one dimension at a
/// time: a range inside one row of dimension d recurses into that row; any
/// other range is a suffix of its first row, whole middle rows, and a prefix
/// of its last row. Suffixes and prefixes of a k-dimensional block need at most
/// k boxes each, hence at most 2*rank-1 boxes in all.
class FlatRangeSplitter {
public:
  explicit FlatRangeSplitter(const Box &outer)
      : outer_(outer), shape_(outer.shape()),
        strides_(rowMajorStrides(shape_)) {}

  std::vector<FlatPiece> split(int64_t lo, int64_t hi) {
    pieces_.clear();
    stored_ = 0;
    split(0, lo, hi);
    return std::move(pieces_);
  }

private:
  /// [lo, hi) is a non-empty range of the block spanned by dimensions d..n-1
  /// under the fixed indices `rowPrefix_` of dimensions 0..d-1.
  void split(size_t d, int64_t lo, int64_t hi) {
    if (d == outer_.rank()) { // a single element
      emit(d, Interval{});
      return;
    }
    const int64_t stride = strides_[d];
    if (lo == 0 && hi == shape_[d] * stride) {
      emit(d, Interval{0, shape_[d]});
      return;
    }
    const int64_t firstRow = lo / stride, firstOffset = lo % stride;
    const int64_t lastRow = hi / stride, lastOffset = hi % stride;
    if (firstRow == lastRow) {
      splitRow(d, firstRow, firstOffset, lastOffset);
      return;
    }
    int64_t wholeBegin = firstRow;
    if (firstOffset != 0) {
      splitRow(d, firstRow, firstOffset, stride);
      ++wholeBegin;
    }
    if (wholeBegin < lastRow)
      emit(d, Interval{wholeBegin, lastRow});
    if (lastOffset != 0)
      splitRow(d, lastRow, 0, lastOffset);
  }

  void splitRow(size_t d, int64_t row, int64_t lo, int64_t hi) {
    rowPrefix_.push_back(row);
    split(d + 1, lo, hi);
    rowPrefix_.pop_back();
  }

  /// Emits the box with dimensions 0..d-1 fixed at rowPrefix_, dimension d
  /// spanning `rows` (relative to outer), and the dimensions after d whole.
  void emit(size_t d, Interval rows) {
    llvm::SmallVector<Interval, 4> dims;
    dims.reserve(outer_.rank());
    for (size_t i = 0; i < outer_.rank(); ++i) {
      const int64_t base = outer_.dim(i).begin;
      if (i < d)
        dims.push_back(
            Interval{base + rowPrefix_[i], base + rowPrefix_[i] + 1});
      else if (i == d)
        dims.push_back(Interval{base + rows.begin, base + rows.end});
      else
        dims.push_back(outer_.dim(i));
    }
    Box box(dims);
    const int64_t volume = box.volume();
    pieces_.push_back(FlatPiece{std::move(box), stored_});
    stored_ += volume;
  }

  const Box &outer_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  llvm::SmallVector<int64_t, 4> rowPrefix_;
  std::vector<FlatPiece> pieces_;
  int64_t stored_ = 0;
};

} // namespace

std::vector<FlatPiece> flatRangeToBoxes(const Box &outer, int64_t a,
                                        int64_t b) {
  const int64_t volume = outer.volume();
  const int64_t lo = std::clamp<int64_t>(a, 0, volume);
  const int64_t hi = std::clamp<int64_t>(b, 0, volume);
  if (lo >= hi)
    return {};
  return FlatRangeSplitter(outer).split(lo, hi);
}

std::vector<FlatRun> flatRunsOfBox(const Box &outer, int64_t a, int64_t b,
                                   const Box &region) {
  if (outer.rank() != region.rank())
    return {};
  const int64_t volume = outer.volume();
  const int64_t lo = std::clamp<int64_t>(a, 0, volume);
  const int64_t hi = std::clamp<int64_t>(b, 0, volume);
  if (lo >= hi)
    return {};
  std::optional<Box> clip = intersect(region, outer);
  if (!clip)
    return {};
  const size_t rank = outer.rank();
  if (rank == 0) // one element, stored at 0 (lo == 0, hi == 1)
    return {FlatRun{0, 1, 0}};

  // Trailing dimensions that the clipped region spans wholly, both in outer
  // and in region, are contiguous on both sides; dimension `run` is the
  // innermost one that is not. A "chunk" fixes the dimensions before `run`
  // and spans the rest: it is contiguous in storage and in region, and two
  // consecutive chunks are never contiguous on both sides.
  size_t whole = rank;
  while (whole > 0 && clip->dim(whole - 1) == outer.dim(whole - 1) &&
         clip->dim(whole - 1) == region.dim(whole - 1))
    --whole;
  const size_t run = whole == 0 ? 0 : whole - 1;

  const std::vector<int64_t> outerStrides = rowMajorStrides(outer.shape());
  const std::vector<int64_t> regionStrides = rowMajorStrides(region.shape());
  const int64_t chunkLength = clip->dim(run).size() * outerStrides[run];
  int64_t chunkCount = 1;
  for (size_t i = 0; i < run; ++i)
    chunkCount *= clip->dim(i).size();

  // Flat index in outer and row-major offset in region of chunk k's first
  // element; both grow with k.
  auto chunkStart = [&](int64_t k) {
    int64_t flat =
        (clip->dim(run).begin - outer.dim(run).begin) * outerStrides[run];
    int64_t inRegion =
        (clip->dim(run).begin - region.dim(run).begin) * regionStrides[run];
    for (size_t i = run; i > 0; --i) {
      const Interval &d = clip->dim(i - 1);
      const int64_t coord = d.begin + k % d.size();
      k /= d.size();
      flat += (coord - outer.dim(i - 1).begin) * outerStrides[i - 1];
      inRegion += (coord - region.dim(i - 1).begin) * regionStrides[i - 1];
    }
    return std::pair<int64_t, int64_t>(flat, inRegion);
  };

  // The first chunk that ends after lo; chunks before it are not stored.
  int64_t first = 0, last = chunkCount;
  while (first < last) {
    const int64_t mid = first + (last - first) / 2;
    if (chunkStart(mid).first + chunkLength <= lo)
      first = mid + 1;
    else
      last = mid;
  }

  std::vector<FlatRun> runs;
  for (int64_t k = first; k < chunkCount; ++k) {
    const auto [flat, inRegion] = chunkStart(k);
    if (flat >= hi)
      break;
    const int64_t begin = std::max(flat, lo);
    const int64_t end = std::min(flat + chunkLength, hi);
    runs.push_back(FlatRun{begin - lo, end - begin, inRegion + (begin - flat)});
  }
  return runs;
}

} // namespace aoa
