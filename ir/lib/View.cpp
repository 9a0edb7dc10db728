//===- View.cpp - Piece geometry -------------------------------------------===//
#include "aoa/ir/View.h"

#include "aoa/ir/ShardMetadata.h"

#include <algorithm>
#include <set>

namespace aoa {

std::string ReshapeMarker::text() const {
  return (flatten ? "flatten:" : "reshape:") + formatShape(canonical);
}

std::shared_ptr<const Transform> Transform::identity(size_t rank) {
  auto t = std::make_shared<Transform>();
  t->before = Permutation::identity(rank);
  t->after = Permutation::identity(rank);
  return t;
}

std::shared_ptr<const Transform>
Transform::withPermutation(const Permutation &p,
                           std::string_view spelling) const {
  auto t = std::make_shared<Transform>(*this);
  if (reshape)
    t->after = after.then(p);
  else
    t->before = before.then(p);
  t->postprocess.push_back(p.toString());
  t->postprocessAsWritten.push_back(spelling.empty() ? t->postprocess.back()
                                                     : std::string(spelling));
  return t;
}

std::shared_ptr<const Transform> Transform::withCast(DType dtype) const {
  auto t = std::make_shared<Transform>(*this);
  t->castTo = dtype;
  t->postprocess.push_back(std::string(dtypeName(dtype)));
  t->postprocessAsWritten.push_back(t->postprocess.back());
  return t;
}

std::shared_ptr<const Transform>
Transform::withReshape(ReshapeMarker marker) const {
  auto t = std::make_shared<Transform>(*this);
  t->postprocess.push_back(marker.text());
  t->postprocessAsWritten.push_back(t->postprocess.back());
  size_t rank = marker.flatten ? 2 : marker.canonical.size();
  t->after = Permutation::identity(rank);
  t->reshape = std::move(marker);
  return t;
}

namespace {

/// Moves `region` (inside `from`) onto the box of equal extents `to`.
Box shiftOnto(const Box &region, const Box &from, const Box &to) {
  llvm::SmallVector<Interval, 4> dims;
  for (size_t i = 0; i < region.rank(); ++i) {
    int64_t begin = to.dim(i).begin + (region.dim(i).begin - from.dim(i).begin);
    dims.push_back({begin, begin + region.dim(i).size()});
  }
  return Box(dims);
}

} // namespace

std::optional<Box> sourceRegionOf(const Piece &piece, const Box &region,
                                  std::string &why) {
  const Transform &t = *piece.transform;
  size_t rank = region.rank();
  if (!t.reshape && t.before.rank() == rank && piece.view.rank() == rank &&
      piece.source.rank() == rank) {
    // The region shifted onto the source, axis i of the view being axis
    // before[i] of the input: before.inverse().apply(shiftOnto(region,
    // view, before.apply(source))) in one pass (every answer asks this).
    llvm::SmallVector<Interval, 4> dims(rank);
    for (size_t i = 0; i < rank; ++i) {
      unsigned axis = t.before[i];
      int64_t begin = piece.source.dim(axis).begin +
                      (region.dim(i).begin - piece.view.dim(i).begin);
      dims[axis] = {begin, begin + region.dim(i).size()};
    }
    return Box(dims);
  }
  // The piece's source seen in the frame just before any reshape.
  Box sourceBefore = t.before.apply(piece.source);
  if (!t.reshape)
    return t.before.inverse().apply(shiftOnto(region, piece.view, sourceBefore));

  const ReshapeMarker &marker = *t.reshape;
  int64_t w = marker.blockRows();
  Permutation undoAfter = t.after.inverse();
  Box wanted = undoAfter.apply(region);
  Box whole = undoAfter.apply(piece.view);
  llvm::SmallVector<Interval, 4> dims;
  if (!marker.flatten) {
    // Canonical frame: blocks x block rows x trailing dims; the input is
    // flattened, each block being w consecutive rows.
    for (size_t d = 1; d < wanted.rank(); ++d)
      if (wanted.dim(d) != whole.dim(d)) {
        why = "the region " + region.toString() + " cuts the blocks of `" +
              marker.text() + "` along canonical dimension " +
              std::to_string(d) + "; only whole blocks can be mapped back";
        return std::nullopt;
      }
    int64_t rowBegin = sourceBefore.dim(0).begin;
    dims.push_back({rowBegin + (wanted.dim(0).begin - whole.dim(0).begin) * w,
                    rowBegin + (wanted.dim(0).end - whole.dim(0).begin) * w});
    dims.push_back(sourceBefore.dim(1));
  } else {
    // Flattened frame: rows x columns; the input is canonical.
    int64_t r0 = wanted.dim(0).begin - whole.dim(0).begin;
    int64_t r1 = wanted.dim(0).end - whole.dim(0).begin;
    if (wanted.dim(1) != whole.dim(1) || r0 % w != 0 || r1 % w != 0) {
      why = "the region " + region.toString() + " is not a run of whole " +
            std::to_string(w) + "-row blocks of `" + marker.text() + "`";
      return std::nullopt;
    }
    int64_t blockBegin = sourceBefore.dim(0).begin;
    dims.push_back({blockBegin + r0 / w, blockBegin + r1 / w});
    for (size_t d = 1; d < sourceBefore.rank(); ++d)
      dims.push_back(sourceBefore.dim(d));
  }
  return t.before.inverse().apply(Box(dims));
}

std::optional<Piece> restrictPiece(const Piece &piece, const Box &region,
                                   std::string &why) {
  std::optional<Box> common = intersect(piece.view, region);
  if (!common) {
    why = "the region " + region.toString() + " does not overlap the piece " +
          piece.view.toString();
    return std::nullopt;
  }
  std::optional<Box> source = sourceRegionOf(piece, *common, why);
  if (!source)
    return std::nullopt;
  return Piece{*common, piece.input, *source, piece.transform};
}

ViewRef makeView(TensorType type, std::vector<Piece> pieces) {
  auto view = std::make_shared<View>();
  view->type = std::move(type);
  view->pieces = std::move(pieces);
  return view;
}

PieceIndex::PieceIndex(const View &view) : view_(view) {
  size_t rank = view.type.shape.size();
  if (rank == 0)
    return;
  size_t bestCount = 0;
  for (size_t axis = 0; axis < rank; ++axis) {
    std::set<int64_t> distinct;
    for (const Piece &piece : view.pieces)
      distinct.insert(piece.view.dim(axis).begin);
    if (distinct.size() > bestCount) {
      bestCount = distinct.size();
      axis_ = axis;
    }
  }
  starts_.reserve(view.pieces.size());
  for (uint32_t i = 0; i < view.pieces.size(); ++i) {
    const Interval &extent = view.pieces[i].view.dim(axis_);
    starts_.push_back({extent.begin, i});
    longest_ = std::max(longest_, extent.size());
  }
  std::sort(starts_.begin(), starts_.end());
}

std::vector<uint32_t> PieceIndex::overlapping(const Box &query) const {
  std::vector<uint32_t> hits;
  auto overlaps = [&](uint32_t i) {
    return intersect(view_.pieces[i].view, query).has_value();
  };
  if (starts_.empty()) {
    for (uint32_t i = 0; i < view_.pieces.size(); ++i)
      if (overlaps(i))
        hits.push_back(i);
    return hits;
  }
  // A piece starting at s reaches at most s + longest_ - 1.
  const Interval &q = query.dim(axis_);
  auto it = std::lower_bound(
      starts_.begin(), starts_.end(),
      std::pair<int64_t, uint32_t>{q.begin - longest_ + 1, 0});
  for (; it != starts_.end() && it->first < q.end; ++it)
    if (overlaps(it->second))
      hits.push_back(it->second);
  std::sort(hits.begin(), hits.end());
  return hits;
}

} // namespace aoa
