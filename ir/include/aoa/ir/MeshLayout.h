//===- MeshLayout.h - Tensor layouts from a device mesh ---------*- C++ -*-===//
//
// A layout written the way training frameworks write it: a device mesh and,
// per tensor, which mesh axes split which tensor dimensions. Expanding it
// gives every process's block of the tensor (global_offset, local_shape),
// i.e. the shards of docs/shard-metadata.md.
//
// Conventions (docs/layouts.md derives them from the seeds):
//  - Ranks are numbered row-major over the mesh: the last axis varies fastest
//    (MindSpore numbers its device_matrix "right to left", the same thing).
//    An explicit process-id list (Paddle's process_mesh) replaces the
//    numbering: it gives the rank at every coordinate, row-major.
//  - A tensor dimension split over mesh axes A (a list, outermost first) has
//    prod(|a|) blocks of global / prod(|a|) elements; a process's block index
//    is its coordinates on A read as a mixed-radix number. Dimensions must
//    divide evenly, as Paddle and MindSpore both require.
//  - Mesh axes that split no dimension replicate the tensor: processes that
//    differ only there hold the same block.
//  - Paddle's dims_mapping numbers mesh axes from the left; MindSpore's
//    tensor_map from the right (value v is axis ndim-1-v). -1 (or "None")
//    leaves a dimension whole; an axis may also be named by its alias.
//  - A pipeline stage or an expert group is a sub-mesh (select()): it keeps
//    every axis, names and numbering included, so one placement fits every
//    stage.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_MESHLAYOUT_H
#define AOA_IR_MESHLAYOUT_H

#include "aoa/ir/Box.h"
#include "aoa/ir/ShardMetadata.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace aoa {

/// The inputs a LayoutError can be about.
enum class LayoutInput { Whole, MeshShape, AxisNames, ProcessIds, Placement };

/// A mesh or placement that cannot be used. `input`, `entry` and `item` say
/// what is at fault, so a loader can point at it.
struct LayoutError {
  std::string message;
  std::string hint;
  LayoutInput input = LayoutInput::Whole;
  /// The offending entry of `input` (a mesh axis, a process id, a tensor
  /// dimension).
  std::optional<size_t> entry;
  /// Within a placement entry, the offending item of its list of mesh axes.
  std::optional<size_t> item;
};

/// Processes arranged as an n-dimensional grid. Immutable once made.
class DeviceMesh {
public:
  /// More would only come from a typo, and costs memory per process.
  static constexpr int64_t kMaxProcesses = int64_t(1) << 24;

  /// Validates and makes a mesh: at least one axis, every size >= 1, at most
  /// kMaxProcesses processes. `axisNames` is empty or names every axis
  /// (distinct, non-empty, not "None", which placements read as "not
  /// split"). `processIds` is empty (ranks 0, 1, 2, ... row-major) or gives
  /// the rank at every coordinate, row-major, each rank once.
  static std::optional<DeviceMesh> create(std::vector<int64_t> shape,
                                          std::vector<std::string> axisNames,
                                          std::vector<int64_t> processIds,
                                          LayoutError *error = nullptr);

  size_t ndim() const { return shape_.size(); }
  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  /// Empty when the axes have no names.
  llvm::ArrayRef<std::string> axisNames() const { return axisNames_; }
  /// The rank at every coordinate, row-major (last axis fastest).
  llvm::ArrayRef<uint32_t> ranks() const { return ranks_; }
  size_t processCount() const { return ranks_.size(); }

  std::optional<unsigned> findAxis(std::string_view name) const;
  /// "axis 1 ('mp', size 4)" or "axis 1 (size 4)", for messages.
  std::string describeAxis(unsigned axis) const;

  /// The processes whose coordinate on `axis` is `index` (a pipeline stage,
  /// an expert group): the same axes with `axis` of size 1, so placements
  /// written for the whole mesh keep their meaning. nullopt when `index` is
  /// outside the axis (or `axis` outside the mesh).
  std::optional<DeviceMesh> select(unsigned axis, int64_t index,
                                   LayoutError *error = nullptr) const;

private:
  DeviceMesh() = default;
  std::vector<int64_t> shape_;
  std::vector<std::string> axisNames_;
  std::vector<uint32_t> ranks_;
};

/// How a placement numbers mesh axes.
enum class AxisNumbering {
  /// Paddle's dims_mapping: j is mesh axis j.
  FromLeft,
  /// MindSpore's tensor_map: v is device_matrix axis ndim-1-v.
  FromRight
};

/// A mesh axis as a placement writes it: an index in the placement's
/// numbering, or the axis's name.
using AxisSpelling = std::variant<int64_t, std::string>;

/// One tensor dimension's entry as written: a single -1 or "None" (not
/// split), one axis, or several (split over their product, first outermost).
using DimPlacementSpelling = llvm::SmallVector<AxisSpelling, 1>;

/// Which mesh axes split each tensor dimension; valid for the mesh and
/// global shape it was resolved against.
class TensorPlacement {
public:
  /// Resolves the written entries, one per tensor dimension. Errors: entry
  /// count differs from the tensor's rank, axis index outside the mesh,
  /// unknown axis name, a mesh axis used twice, a dimension the axes do not
  /// divide evenly.
  static std::optional<TensorPlacement>
  resolve(const DeviceMesh &mesh, llvm::ArrayRef<int64_t> globalShape,
          llvm::ArrayRef<DimPlacementSpelling> entries, AxisNumbering numbering,
          LayoutError *error = nullptr);

  /// Every process holds the whole tensor.
  static TensorPlacement replicated(size_t ndim);

  size_t ndim() const { return dimAxes_.size(); }
  /// The mesh axes (left-to-right indices) splitting `dim`, outermost first.
  llvm::ArrayRef<unsigned> axes(size_t dim) const { return dimAxes_[dim]; }

private:
  std::vector<llvm::SmallVector<unsigned, 2>> dimAxes_;
};

/// One process's part of a tensor.
struct RankBlock {
  uint32_t rank = 0;
  /// The block's row-major index in the grid of blocks (MindSpore's "shard
  /// number"); replicas have equal indices.
  int64_t blockIndex = 0;
  Box box;
  /// Flat placements: the elements of the box's row-major flattening this
  /// process stores (metadata `flat_range`).
  std::optional<FlatElementRange> flat;
};

/// Every process's block, in mesh order (row-major coordinates).
/// Precondition: `placement` was resolved against `mesh` and `globalShape`.
std::vector<RankBlock> expandPlacement(const DeviceMesh &mesh,
                                       const TensorPlacement &placement,
                                       llvm::ArrayRef<int64_t> globalShape);

/// Flat (ZeRO / sharding-v2 style) placement: as expandPlacement, then the
/// E elements of each block's row-major flattening are cut into chunks of
/// ceil(E / n) over the n processes along mesh axis `flatAxis` (which must
/// split no tensor dimension): the process at coordinate i there stores
/// [i * chunk, min((i + 1) * chunk, E)). The tensor is padded to n chunks as
/// sharding-v2 pads its buffer; the padding is stored nowhere, and processes
/// whose chunk is all padding hold no block. An empty block (E = 0) is held
/// whole, without a range, by coordinate 0. Mesh order, as expandPlacement.
std::vector<RankBlock> expandFlatPlacement(const DeviceMesh &mesh,
                                           const TensorPlacement &placement,
                                           llvm::ArrayRef<int64_t> globalShape,
                                           unsigned flatAxis);

} // namespace aoa

#endif // AOA_IR_MESHLAYOUT_H
