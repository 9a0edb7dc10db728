//===- MeshLayout.cpp -----------------------------------------------------===//
#include "aoa/ir/MeshLayout.h"

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/ShardMetadata.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace aoa {

namespace {

/// Placements read this name as "not split", so no axis may carry it.
constexpr std::string_view kNotSplitName = "None";

void fail(LayoutError *error, std::string message, std::string hint,
          LayoutInput input = LayoutInput::Whole,
          std::optional<size_t> entry = std::nullopt,
          std::optional<size_t> item = std::nullopt) {
  if (error)
    *error =
        LayoutError{std::move(message), std::move(hint), input, entry, item};
}

bool isNotSplit(const DimPlacementSpelling &entry) {
  if (entry.size() != 1)
    return false;
  if (const int64_t *index = std::get_if<int64_t>(&entry[0]))
    return *index == -1;
  return std::get<std::string>(entry[0]) == kNotSplitName;
}

std::string spell(const AxisSpelling &axis) {
  if (const int64_t *index = std::get_if<int64_t>(&axis))
    return std::to_string(*index);
  return "'" + std::get<std::string>(axis) + "'";
}

/// "dims_mapping" writes mesh axes from the left, "tensor_map" from the
/// right; messages name the notation so users recognise their own numbers.
const char *numberingName(AxisNumbering numbering) {
  return numbering == AxisNumbering::FromLeft ? "from the left (dims_mapping)"
                                              : "from the right (tensor_map)";
}

} // namespace

//===----------------------------------------------------------------------===//
// DeviceMesh
//===----------------------------------------------------------------------===//

std::optional<DeviceMesh> DeviceMesh::create(std::vector<int64_t> shape,
                                             std::vector<std::string> axisNames,
                                             std::vector<int64_t> processIds,
                                             LayoutError *error) {
  if (shape.empty()) {
    fail(error, "a mesh needs at least one axis",
         "a single process is the mesh [1]");
    return std::nullopt;
  }
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1) {
      fail(error,
           "mesh axis " + std::to_string(i) + " has size " +
               std::to_string(shape[i]) + "; sizes must be at least 1",
           "give the number of processes along each axis",
           LayoutInput::MeshShape, i);
      return std::nullopt;
    }
    if (shape[i] > kMaxProcesses / count) {
      fail(error,
           "mesh " + formatShape(shape) + " has more than " +
               std::to_string(kMaxProcesses) + " processes",
           "check the mesh's axis sizes", LayoutInput::MeshShape, i);
      return std::nullopt;
    }
    count *= shape[i];
  }

  if (!axisNames.empty()) {
    if (axisNames.size() != shape.size()) {
      fail(error,
           std::to_string(axisNames.size()) +
               (axisNames.size() == 1 ? " axis name" : " axis names") +
               " for a mesh of " + std::to_string(shape.size()) + " axes " +
               formatShape(shape),
           "name every axis of the mesh, or none", LayoutInput::AxisNames);
      return std::nullopt;
    }
    for (size_t i = 0; i < axisNames.size(); ++i) {
      if (axisNames[i].empty() || axisNames[i] == kNotSplitName) {
        fail(error,
             "mesh axis " + std::to_string(i) + " cannot be named '" +
                 axisNames[i] + "'",
             "'None' and the empty name mean \"not split\" in placements",
             LayoutInput::AxisNames, i);
        return std::nullopt;
      }
      for (size_t j = 0; j < i; ++j)
        if (axisNames[j] == axisNames[i]) {
          fail(error,
               "mesh axes " + std::to_string(j) + " and " + std::to_string(i) +
                   " are both named '" + axisNames[i] + "'",
               "give each axis its own name", LayoutInput::AxisNames, i);
          return std::nullopt;
        }
    }
  }

  DeviceMesh mesh;
  mesh.ranks_.reserve(static_cast<size_t>(count));
  if (processIds.empty()) {
    for (int64_t rank = 0; rank < count; ++rank)
      mesh.ranks_.push_back(static_cast<uint32_t>(rank));
  } else {
    if (processIds.size() != static_cast<size_t>(count)) {
      fail(error,
           std::to_string(processIds.size()) + " process ids for mesh " +
               formatShape(shape) + " of " + std::to_string(count) +
               " processes",
           "list the rank at every mesh coordinate, row-major",
           LayoutInput::ProcessIds);
      return std::nullopt;
    }
    std::unordered_set<int64_t> seen;
    for (size_t i = 0; i < processIds.size(); ++i) {
      int64_t id = processIds[i];
      if (id < 0 || id >= kRankLimit) {
        fail(error, "process id " + std::to_string(id) + " is not a rank",
             "ranks are integers from 0 to " + std::to_string(kRankLimit - 1),
             LayoutInput::ProcessIds, i);
        return std::nullopt;
      }
      if (!seen.insert(id).second) {
        fail(error,
             "process id " + std::to_string(id) + " appears twice in the mesh",
             "a process sits at one mesh coordinate only",
             LayoutInput::ProcessIds, i);
        return std::nullopt;
      }
      mesh.ranks_.push_back(static_cast<uint32_t>(id));
    }
  }
  mesh.shape_ = std::move(shape);
  mesh.axisNames_ = std::move(axisNames);
  return mesh;
}

std::optional<unsigned> DeviceMesh::findAxis(std::string_view name) const {
  for (size_t i = 0; i < axisNames_.size(); ++i)
    if (axisNames_[i] == name)
      return static_cast<unsigned>(i);
  return std::nullopt;
}

std::string DeviceMesh::describeAxis(unsigned axis) const {
  std::string out = "axis " + std::to_string(axis) + " (";
  if (!axisNames_.empty())
    out += "'" + axisNames_[axis] + "', ";
  return out + "size " + std::to_string(shape_[axis]) + ")";
}

std::optional<DeviceMesh> DeviceMesh::select(unsigned axis, int64_t index,
                                             LayoutError *error) const {
  if (axis >= ndim()) {
    fail(error,
         "mesh " + formatShape(shape_) + " has no axis " + std::to_string(axis),
         "mesh axes are numbered from 0");
    return std::nullopt;
  }
  if (index < 0 || index >= shape_[axis]) {
    fail(error,
         "index " + std::to_string(index) + " is outside " + describeAxis(axis),
         "pick an index from 0 to " + std::to_string(shape_[axis] - 1));
    return std::nullopt;
  }
  // Walk the coordinates row-major, keeping those on the selected slice;
  // the kept ones are again row-major in the smaller mesh.
  DeviceMesh sub;
  sub.shape_ = shape_;
  sub.shape_[axis] = 1;
  sub.axisNames_ = axisNames_;
  int64_t inner = 1;
  for (size_t i = axis + 1; i < ndim(); ++i)
    inner *= shape_[i];
  for (size_t linear = 0; linear < ranks_.size(); ++linear)
    if ((static_cast<int64_t>(linear) / inner) % shape_[axis] == index)
      sub.ranks_.push_back(ranks_[linear]);
  return sub;
}

//===----------------------------------------------------------------------===//
// TensorPlacement
//===----------------------------------------------------------------------===//

std::optional<TensorPlacement>
TensorPlacement::resolve(const DeviceMesh &mesh,
                         llvm::ArrayRef<int64_t> globalShape,
                         llvm::ArrayRef<DimPlacementSpelling> entries,
                         AxisNumbering numbering, LayoutError *error) {
  if (entries.size() != globalShape.size()) {
    fail(error,
         "the placement has " + std::to_string(entries.size()) +
             (entries.size() == 1 ? " entry" : " entries") +
             " but the tensor has " + std::to_string(globalShape.size()) +
             " dimensions " + formatShape(globalShape),
         "give one entry per tensor dimension (-1 for a dimension that is "
         "not split)",
         LayoutInput::Placement);
    return std::nullopt;
  }
  const int64_t meshRank = static_cast<int64_t>(mesh.ndim());
  TensorPlacement placement;
  placement.dimAxes_.resize(entries.size());
  // The tensor dimension each mesh axis already splits, or -1.
  std::vector<int64_t> usedBy(mesh.ndim(), -1);
  for (size_t dim = 0; dim < entries.size(); ++dim) {
    const DimPlacementSpelling &entry = entries[dim];
    if (isNotSplit(entry))
      continue;
    int64_t blocks = 1;
    for (size_t item = 0; item < entry.size(); ++item) {
      const AxisSpelling &spelling = entry[item];
      unsigned axis = 0;
      if (const int64_t *index = std::get_if<int64_t>(&spelling)) {
        if (*index < 0 || *index >= meshRank) {
          std::string why =
              *index == -1 ? "; -1 (not split) must stand alone" : "";
          fail(error,
               "mesh axis " + std::to_string(*index) +
                   " does not exist: the mesh " + formatShape(mesh.shape()) +
                   " has " + std::to_string(meshRank) + " axes" + why,
               "axes are numbered " + std::string(numberingName(numbering)) +
                   ", 0 to " + std::to_string(meshRank - 1),
               LayoutInput::Placement, dim, item);
          return std::nullopt;
        }
        axis = numbering == AxisNumbering::FromLeft
                   ? static_cast<unsigned>(*index)
                   : static_cast<unsigned>(meshRank - 1 - *index);
      } else {
        const std::string &name = std::get<std::string>(spelling);
        std::optional<unsigned> found = mesh.findAxis(name);
        if (!found) {
          std::string hint;
          std::vector<std::string> names(mesh.axisNames().begin(),
                                         mesh.axisNames().end());
          if (name == kNotSplitName)
            hint = "'None' (not split) must stand alone";
          else if (names.empty())
            hint = "the mesh's axes have no names; give them dim_names "
                   "(alias_name), or use axis numbers";
          else if (std::string close = closestSpelling(name, names);
                   !close.empty())
            hint = "did you mean '" + close + "'?";
          else
            hint = "mesh axes are named " + llvm::join(names, ", ");
          fail(error, "unknown mesh axis '" + name + "'", hint,
               LayoutInput::Placement, dim, item);
          return std::nullopt;
        }
        axis = *found;
      }
      if (usedBy[axis] >= 0) {
        fail(error,
             "tensor dimension " + std::to_string(dim) + " cannot use mesh " +
                 mesh.describeAxis(axis) + ", written " + spell(spelling) +
                 ": it already splits tensor dimension " +
                 std::to_string(usedBy[axis]),
             "a mesh axis can split only one tensor dimension, once",
             LayoutInput::Placement, dim, item);
        return std::nullopt;
      }
      usedBy[axis] = static_cast<int64_t>(dim);
      placement.dimAxes_[dim].push_back(axis);
      blocks *= mesh.shape()[axis];
    }
    if (globalShape[dim] % blocks != 0) {
      std::string axesText;
      for (unsigned axis : placement.dimAxes_[dim])
        axesText += (axesText.empty() ? "" : " x ") + mesh.describeAxis(axis);
      fail(error,
           "tensor dimension " + std::to_string(dim) + " of size " +
               std::to_string(globalShape[dim]) +
               " cannot be split evenly into " + std::to_string(blocks) +
               " blocks by mesh " + axesText,
           "Paddle and MindSpore split dimensions evenly; choose axes whose "
           "sizes divide " +
               std::to_string(globalShape[dim]) + ", or -1 to keep it whole",
           LayoutInput::Placement, dim);
      return std::nullopt;
    }
  }
  return placement;
}

TensorPlacement TensorPlacement::replicated(size_t ndim) {
  TensorPlacement placement;
  placement.dimAxes_.resize(ndim);
  return placement;
}

//===----------------------------------------------------------------------===//
// Expansion
//===----------------------------------------------------------------------===//

std::vector<RankBlock> expandPlacement(const DeviceMesh &mesh,
                                       const TensorPlacement &placement,
                                       llvm::ArrayRef<int64_t> globalShape) {
  const size_t ndim = globalShape.size();
  // Blocks along every tensor dimension, and each block's extent.
  std::vector<int64_t> blockCounts(ndim, 1), blockShape(ndim);
  for (size_t dim = 0; dim < ndim; ++dim) {
    for (unsigned axis : placement.axes(dim))
      blockCounts[dim] *= mesh.shape()[axis];
    blockShape[dim] = globalShape[dim] / blockCounts[dim];
  }
  std::vector<int64_t> meshStrides = rowMajorStrides(mesh.shape());
  std::vector<int64_t> blockStrides = rowMajorStrides(blockCounts);

  std::vector<RankBlock> blocks;
  blocks.reserve(mesh.processCount());
  std::vector<int64_t> offset(ndim);
  for (size_t linear = 0; linear < mesh.processCount(); ++linear) {
    RankBlock block;
    block.rank = mesh.ranks()[linear];
    for (size_t dim = 0; dim < ndim; ++dim) {
      // The coordinates on the splitting axes as a mixed-radix number, the
      // first axis most significant.
      int64_t index = 0;
      for (unsigned axis : placement.axes(dim)) {
        int64_t coordinate =
            (static_cast<int64_t>(linear) / meshStrides[axis]) %
            mesh.shape()[axis];
        index = index * mesh.shape()[axis] + coordinate;
      }
      offset[dim] = index * blockShape[dim];
      block.blockIndex += index * blockStrides[dim];
    }
    block.box = Box(offset, blockShape);
    blocks.push_back(std::move(block));
  }
  return blocks;
}

std::vector<RankBlock> expandFlatPlacement(const DeviceMesh &mesh,
                                           const TensorPlacement &placement,
                                           llvm::ArrayRef<int64_t> globalShape,
                                           unsigned flatAxis) {
  std::vector<RankBlock> blocks = expandPlacement(mesh, placement, globalShape);
  if (flatAxis >= mesh.ndim())
    return blocks;
  std::vector<int64_t> meshStrides = rowMajorStrides(mesh.shape());
  const int64_t parts = mesh.shape()[flatAxis];
  std::vector<RankBlock> kept;
  kept.reserve(blocks.size());
  for (size_t linear = 0; linear < blocks.size(); ++linear) {
    RankBlock &block = blocks[linear];
    int64_t coordinate =
        (static_cast<int64_t>(linear) / meshStrides[flatAxis]) % parts;
    int64_t elements = block.box.volume();
    if (elements == 0) {
      if (coordinate == 0)
        kept.push_back(std::move(block));
      continue;
    }
    int64_t chunk = elements / parts + (elements % parts ? 1 : 0);
    int64_t begin = coordinate * chunk;
    int64_t end = std::min(begin + chunk, elements);
    if (begin >= end)
      continue;
    block.flat = FlatElementRange{begin, end};
    kept.push_back(std::move(block));
  }
  return kept;
}

} // namespace aoa
