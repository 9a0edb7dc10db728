//===- View.h - Named values as pieces of source tensors --------*- C++ -*-===//
//
// A View is what a name means during shape propagation (docs/compiler.md, "Views and pieces"): a
// shape, a dtype, and Pieces that tile it. A Piece says: region `view` of
// this view is region `source` of input tensor `input` (a box in that
// tensor's own axis order), seen through a Transform (permutations, casts, an
// optional reshape marker). Split, concat and permute only re-index pieces;
// no data moves and the cost is linear in the pieces touched.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_VIEW_H
#define AOA_IR_VIEW_H

#include "aoa/ir/Box.h"
#include "aoa/ir/Op.h"
#include "aoa/ir/Permutation.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

/// Paddle's reshape between the flattened form (c0*c1, prod(r)) and the
/// canonical form (c0, c1, r...): only the two leading dimensions merge or
/// split, in blocks of c1 rows.
struct ReshapeMarker {
  /// True for `flatten:` (canonical -> flattened), false for `reshape:`.
  bool flatten = false;
  std::vector<int64_t> canonical;

  int64_t blockRows() const { return canonical[1]; }
  /// `reshape:[4, 2, 3]` / `flatten:[4, 2, 3]`.
  std::string text() const;
};

/// What happens to a piece's data on its way from the input tensor into the
/// view, in order. `postprocess` is the reference's list of strings in
/// canonical form (what plans parse); `postprocessAsWritten` is the same list
/// with each permutation spelled as its statement wrote it (`"[1,0]"`), which
/// the reference's answers carry. The permutations are also kept composed,
/// split at the reshape marker, for the geometry.
struct Transform {
  std::vector<std::string> postprocess;
  std::vector<std::string> postprocessAsWritten;
  /// The permutations before the reshape (all of them when there is none),
  /// composed; its rank is the input's rank.
  Permutation before;
  std::optional<ReshapeMarker> reshape;
  /// The permutations after the reshape, composed; rank of the view.
  Permutation after;
  /// The dtype of the last cast, if any.
  std::optional<DType> castTo;

  /// The identity transform of an input of `rank` dimensions.
  static std::shared_ptr<const Transform> identity(size_t rank);
  /// `spelling` is the permutation's text as written; empty: canonical.
  std::shared_ptr<const Transform>
  withPermutation(const Permutation &p, std::string_view spelling = {}) const;
  std::shared_ptr<const Transform> withCast(DType dtype) const;
  std::shared_ptr<const Transform> withReshape(ReshapeMarker marker) const;
  bool empty() const { return postprocess.empty(); }
};

struct Piece {
  /// The region of the view it fills.
  Box view;
  /// Which input tensor provides it (an index chosen by the owner of the
  /// views, e.g. into the propagation's input table).
  uint32_t input = 0;
  /// The region of the input, in the input's own axis order.
  Box source;
  std::shared_ptr<const Transform> transform;
};

/// The region of the input that provides `region` of the piece's view
/// (`region` must lie inside `piece.view`): permutations are undone (the
/// reference's "transpose slice inversion", §8.2) and reshape markers mapped
/// through (§8.3). nullopt with `why` set when the region cannot be expressed
/// as one box of the input, e.g. it cuts a reshaped block.
std::optional<Box> sourceRegionOf(const Piece &piece, const Box &region,
                                  std::string &why);

/// The piece restricted to `region` of its view (which must overlap it).
std::optional<Piece> restrictPiece(const Piece &piece, const Box &region,
                                   std::string &why);

struct View {
  TensorType type;
  /// They tile the view: disjoint, and together exactly its box (except
  /// where a removed input leaves a hole; see the query engine).
  std::vector<Piece> pieces;
};

using ViewRef = std::shared_ptr<const View>;

ViewRef makeView(TensorType type, std::vector<Piece> pieces);

/// Finds the pieces of a view that overlap a box without looking at all of
/// them: pieces are sorted along the axis on which they have the most
/// distinct starts, and a query scans only those that can reach it.
class PieceIndex {
public:
  explicit PieceIndex(const View &view);
  /// Indices of the overlapping pieces, in the view's piece order.
  std::vector<uint32_t> overlapping(const Box &query) const;

private:
  const View &view_;
  size_t axis_ = 0;
  int64_t longest_ = 0;
  /// (start along axis_, piece index), sorted.
  std::vector<std::pair<int64_t, uint32_t>> starts_;
};

} // namespace aoa

#endif // AOA_IR_VIEW_H
