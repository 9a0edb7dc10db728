//===- MeshLayoutTest.cpp - Meshes, placements, layout specs --------------===//
//
// The worked examples of the seeds (MindSpore's device_matrix + tensor_map,
// Paddle's process_mesh + dims_mapping) with the rank-to-shard assignments
// they derive, validation errors, a randomized tiling property against a
// brute-force element model, and the layout-spec loader end to end.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/LayoutSpecLoader.h"
#include "aoa/formats/metadata/MetadataLoader.h"
#include "aoa/formats/metadata/MetadataWriter.h"
#include "aoa/ir/MeshLayout.h"

#include "BruteForce.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace aoa;

namespace {

DeviceMesh makeMesh(std::vector<int64_t> shape,
                    std::vector<std::string> names = {},
                    std::vector<int64_t> ids = {}) {
  LayoutError error;
  std::optional<DeviceMesh> mesh = DeviceMesh::create(
      std::move(shape), std::move(names), std::move(ids), &error);
  EXPECT_TRUE(mesh) << error.message;
  return mesh ? std::move(*mesh) : *DeviceMesh::create({1}, {}, {});
}

/// One entry per tensor dimension, each a single axis spelling.
std::vector<DimPlacementSpelling>
spellings(std::initializer_list<AxisSpelling> axes) {
  std::vector<DimPlacementSpelling> out;
  for (const AxisSpelling &axis : axes)
    out.push_back(DimPlacementSpelling{axis});
  return out;
}

std::vector<RankBlock> expand(const DeviceMesh &mesh,
                              std::vector<int64_t> shape,
                              const std::vector<DimPlacementSpelling> &entries,
                              AxisNumbering numbering) {
  LayoutError error;
  std::optional<TensorPlacement> placement =
      TensorPlacement::resolve(mesh, shape, entries, numbering, &error);
  EXPECT_TRUE(placement) << error.message;
  if (!placement)
    return {};
  return expandPlacement(mesh, *placement, shape);
}

/// blockIndex of every rank, indexed by rank.
std::vector<int64_t> blockOfRank(const std::vector<RankBlock> &blocks) {
  std::vector<int64_t> out(blocks.size(), -1);
  for (const RankBlock &block : blocks)
    out.at(block.rank) = block.blockIndex;
  return out;
}

const RankBlock &blockOf(const std::vector<RankBlock> &blocks, uint32_t rank) {
  for (const RankBlock &block : blocks)
    if (block.rank == rank)
      return block;
  ADD_FAILURE() << "no block for rank " << rank;
  return blocks.front();
}

LayoutError resolveError(const DeviceMesh &mesh, std::vector<int64_t> shape,
                         const std::vector<DimPlacementSpelling> &entries,
                         AxisNumbering numbering = AxisNumbering::FromLeft) {
  LayoutError error;
  EXPECT_FALSE(
      TensorPlacement::resolve(mesh, shape, entries, numbering, &error));
  return error;
}

LayoutError meshError(std::vector<int64_t> shape,
                      std::vector<std::string> names = {},
                      std::vector<int64_t> ids = {}) {
  LayoutError error;
  EXPECT_FALSE(DeviceMesh::create(shape, names, ids, &error));
  return error;
}

//===----------------------------------------------------------------------===//
// Seed 001: MindSpore Layout(device_matrix, alias_name)(tensor_map)
//===----------------------------------------------------------------------===//

/// The seed's recipe, written out: number the device matrix right to left
/// (rank = row-major coordinates), then shard number = sum over the
/// tensor_map's axes of coordinate * stride, the strides being products of
/// the sizes of the axes after it in tensor_map order.
int64_t seedShardNumber(const std::vector<int64_t> &deviceMatrix,
                        const std::vector<unsigned> &tensorMapAxes,
                        int64_t rank) {
  std::vector<int64_t> coordinates(deviceMatrix.size());
  for (size_t i = deviceMatrix.size(); i-- > 0;) {
    coordinates[i] = rank % deviceMatrix[i];
    rank /= deviceMatrix[i];
  }
  int64_t shard = 0;
  for (size_t i = 0; i < tensorMapAxes.size(); ++i) {
    int64_t stride = 1;
    for (size_t j = i + 1; j < tensorMapAxes.size(); ++j)
      stride *= deviceMatrix[tensorMapAxes[j]];
    shard += coordinates[tensorMapAxes[i]] * stride;
  }
  return shard;
}

/// Expands the seed's Layout(deviceMatrix, ("a", ..., "e"))(tensorMap) and
/// checks the shard of every rank against `expected` (the seed's result) and
/// against the seed's stride formula.
std::vector<RankBlock> expandSeedLayout(std::vector<int64_t> deviceMatrix,
                                        std::vector<std::string> tensorMap,
                                        std::vector<int64_t> shape,
                                        std::vector<int64_t> expected) {
  DeviceMesh mesh = makeMesh(deviceMatrix, {"a", "b", "c", "d", "e"});
  std::vector<DimPlacementSpelling> entries;
  std::vector<unsigned> axes;
  for (const std::string &alias : tensorMap) {
    entries.push_back(DimPlacementSpelling{alias});
    axes.push_back(static_cast<unsigned>(alias[0] - 'a'));
  }
  std::vector<RankBlock> blocks =
      expand(mesh, shape, entries, AxisNumbering::FromRight);
  EXPECT_EQ(blockOfRank(blocks), expected);
  for (const RankBlock &block : blocks)
    EXPECT_EQ(block.blockIndex,
              seedShardNumber(deviceMatrix, axes, block.rank));
  return blocks;
}

TEST(MeshLayoutSeed001, FullSplit2x2x2) {
  // layout = Layout((2, 1, 2, 2, 1), ("a", "b", "c", "d", "e"))
  // layout("b", "d", "e", "c", "a"), tensor shape (1, 2, 1, 2, 2);
  // stride b=8, d=4, e=4, c=2, a=1: rank r holds shard 4d + 2c + a.
  std::vector<RankBlock> blocks =
      expandSeedLayout({2, 1, 2, 2, 1}, {"b", "d", "e", "c", "a"},
                       {1, 2, 1, 2, 2}, {0, 4, 2, 6, 1, 5, 3, 7});
  ASSERT_EQ(blocks.size(), 8u);
  // The tensor holds 0..7 row-major, one element per shard: rank 1 (d = 1)
  // holds element [0, 1, 0, 0, 0], i.e. the value 4.
  EXPECT_EQ(blockOf(blocks, 1).box.offsets(),
            (std::vector<int64_t>{0, 1, 0, 0, 0}));
  EXPECT_EQ(blockOf(blocks, 4).box.offsets(),
            (std::vector<int64_t>{0, 0, 0, 0, 1}));
  EXPECT_EQ(blockOf(blocks, 6).box.offsets(),
            (std::vector<int64_t>{0, 0, 0, 1, 1}));
  for (const RankBlock &block : blocks)
    EXPECT_EQ(block.box.shape(), (std::vector<int64_t>{1, 1, 1, 1, 1}));

  // The same layout with tensor_map numbers (axes counted from the right:
  // a=4 b=3 c=2 d=1 e=0), and with Paddle's left-to-right numbers.
  DeviceMesh mesh = makeMesh({2, 1, 2, 2, 1});
  EXPECT_EQ(
      blockOfRank(expand(mesh, {1, 2, 1, 2, 2}, spellings({3, 1, 0, 2, 4}),
                         AxisNumbering::FromRight)),
      blockOfRank(blocks));
  EXPECT_EQ(
      blockOfRank(expand(mesh, {1, 2, 1, 2, 2}, spellings({1, 3, 4, 2, 0}),
                         AxisNumbering::FromLeft)),
      blockOfRank(blocks));
}

TEST(MeshLayoutSeed001, FullSplit4x2WithUnusedAxis) {
  // layout = Layout((4, 1, 1, 2, 1), ("a", "b", "c", "d", "e"))
  // layout("b", "d", "e", "a"): c (size 1) is unused and dropped;
  // stride b=8, d=4, e=4, a=1: rank r holds shard 4d + a.
  std::vector<RankBlock> blocks =
      expandSeedLayout({4, 1, 1, 2, 1}, {"b", "d", "e", "a"}, {1, 2, 1, 4},
                       {0, 4, 1, 5, 2, 6, 3, 7});
  EXPECT_EQ(blockOf(blocks, 3).box.offsets(),
            (std::vector<int64_t>{0, 1, 0, 1}));
}

TEST(MeshLayoutSeed001, UnderSplitHasReplicas) {
  // layout = Layout((2, 1, 2, 2, 1), ("a", "b", "c", "d", "e"))
  // layout("b", "e", "c", "a"): d (size 2) is unused, so it replicates;
  // stride b=4, e=4, c=2, a=1: rank r holds shard 2c + a; d is ignored.
  std::vector<RankBlock> blocks =
      expandSeedLayout({2, 1, 2, 2, 1}, {"b", "e", "c", "a"}, {1, 1, 2, 2},
                       {0, 0, 2, 2, 1, 1, 3, 3});
  ASSERT_EQ(blocks.size(), 8u);
  // Ranks that differ only on d hold the same box.
  for (uint32_t rank = 0; rank < 8; rank += 2)
    EXPECT_EQ(blockOf(blocks, rank).box, blockOf(blocks, rank + 1).box);
  EXPECT_NE(blockOf(blocks, 0).box, blockOf(blocks, 2).box);
  EXPECT_EQ(blockOf(blocks, 6).box.offsets(),
            (std::vector<int64_t>{0, 0, 1, 1}));
}

TEST(MeshLayoutSeed001, ShardStrategyIsIdentityTensorMap) {
  // .shard(((2, 1, 2, 2, 1),)): dev_matrix = strategy, tensor_map =
  // (4, 3, 2, 1, 0), so tensor dimension i splits over device axis i and
  // rank r holds shard r.
  std::vector<int64_t> deviceMatrix = {2, 1, 2, 2, 1};
  DeviceMesh mesh = makeMesh(deviceMatrix);
  std::vector<RankBlock> blocks =
      expand(mesh, {2, 1, 2, 2, 1}, spellings({4, 3, 2, 1, 0}),
             AxisNumbering::FromRight);
  EXPECT_EQ(blockOfRank(blocks),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(blockOf(blocks, 5).box.offsets(),
            (std::vector<int64_t>{1, 0, 0, 1, 0}));

  // .shard(((2, 1, 1, 2, 1),)) on 8 cards has 4 blocks; with the repeat axis
  // written out on the right, neighbouring ranks are replicas.
  DeviceMesh repeated = makeMesh({2, 1, 1, 2, 1, 2});
  EXPECT_EQ(
      blockOfRank(expand(repeated, {2, 1, 1, 2, 1}, spellings({5, 4, 3, 2, 1}),
                         AxisNumbering::FromRight)),
      (std::vector<int64_t>{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(MeshLayoutSeed001, AliasNoneAndMinusOneLeaveADimensionWhole) {
  DeviceMesh mesh = makeMesh({2, 4}, {"axis_0", "axis_1"});
  std::vector<RankBlock> blocks = expand(
      mesh, {2, 8}, spellings({"None", "axis_1"}), AxisNumbering::FromRight);
  EXPECT_EQ(blockOf(blocks, 5).box.toString(), "[0:2, 2:4]");
  EXPECT_EQ(blockOfRank(blocks),
            blockOfRank(expand(mesh, {2, 8}, spellings({-1, 0}),
                               AxisNumbering::FromRight)));
  // The seed's opening example: (2, 4) tensor on (2, 4) devices, one element
  // each; rank 6 is (1, 2).
  std::vector<RankBlock> full = expand(
      mesh, {2, 4}, spellings({"axis_0", "axis_1"}), AxisNumbering::FromRight);
  EXPECT_EQ(blockOf(full, 6).box.toString(), "[1:2, 2:3]");
}

//===----------------------------------------------------------------------===//
// Seed 002: Paddle process_mesh + dims_mapping
//===----------------------------------------------------------------------===//

TEST(MeshLayoutSeed002, ThreeMachinesTwoCards) {
  // process_mesh [[0, 1], [2, 3], [4, 5]], tensor (6, 12).
  DeviceMesh mesh = makeMesh({3, 2}, {}, {0, 1, 2, 3, 4, 5});
  // dims_mapping [-1, 1]: (6, 6) per card; the cards of the three machines
  // at the same position hold the same values.
  std::vector<RankBlock> columns =
      expand(mesh, {6, 12}, spellings({-1, 1}), AxisNumbering::FromLeft);
  for (uint32_t rank : {0u, 2u, 4u})
    EXPECT_EQ(blockOf(columns, rank).box.toString(), "[0:6, 0:6]");
  for (uint32_t rank : {1u, 3u, 5u})
    EXPECT_EQ(blockOf(columns, rank).box.toString(), "[0:6, 6:12]");

  // dims_mapping [0, -1]: rows split over the machines.
  std::vector<RankBlock> rows =
      expand(mesh, {6, 12}, spellings({0, -1}), AxisNumbering::FromLeft);
  EXPECT_EQ(blockOf(rows, 0).box.toString(), "[0:2, 0:12]");
  EXPECT_EQ(blockOf(rows, 1).box.toString(), "[0:2, 0:12]");
  EXPECT_EQ(blockOf(rows, 3).box.toString(), "[2:4, 0:12]");
  EXPECT_EQ(blockOf(rows, 4).box.toString(), "[4:6, 0:12]");

  // dims_mapping [0, 1]: every card its own (2, 6) block.
  std::vector<RankBlock> both =
      expand(mesh, {6, 12}, spellings({0, 1}), AxisNumbering::FromLeft);
  std::set<std::string> boxes;
  for (const RankBlock &block : both) {
    boxes.insert(block.box.toString());
    EXPECT_EQ(block.box.shape(), (std::vector<int64_t>{2, 6}));
  }
  EXPECT_EQ(boxes.size(), 6u);
  EXPECT_EQ(blockOf(both, 5).box.toString(), "[4:6, 6:12]");
}

TEST(MeshLayoutSeed002, ProcessIdsPlaceRanksOnTheMesh) {
  // The rank at each coordinate comes from the process_mesh, not from the
  // coordinate: [[5, 4], [3, 2], [1, 0]].
  DeviceMesh mesh = makeMesh({3, 2}, {}, {5, 4, 3, 2, 1, 0});
  std::vector<RankBlock> blocks =
      expand(mesh, {6, 12}, spellings({0, 1}), AxisNumbering::FromLeft);
  EXPECT_EQ(blockOf(blocks, 5).box.toString(), "[0:2, 0:6]");
  EXPECT_EQ(blockOf(blocks, 2).box.toString(), "[2:4, 6:12]");
  EXPECT_EQ(blockOf(blocks, 0).box.toString(), "[4:6, 6:12]");
}

TEST(MeshLayoutSeed002, BackwardRuleExampleMesh) {
  // ProcessMesh([[0, 1, 2], [3, 4, 5]]), shape [96, 24, 48],
  // dims_mapping [0, 1, -1]: rank 3i + j holds [48i:, 8j:, :].
  DeviceMesh mesh = makeMesh({2, 3}, {}, {0, 1, 2, 3, 4, 5});
  std::vector<RankBlock> blocks = expand(
      mesh, {96, 24, 48}, spellings({0, 1, -1}), AxisNumbering::FromLeft);
  for (uint32_t rank = 0; rank < 6; ++rank)
    EXPECT_EQ(blockOf(blocks, rank).box.offsets(),
              (std::vector<int64_t>{48 * (rank / 3), 8 * (rank % 3), 0}));
  EXPECT_EQ(blockOf(blocks, 4).box.shape(), (std::vector<int64_t>{48, 8, 48}));
}

//===----------------------------------------------------------------------===//
// Several axes on one dimension, sub-meshes
//===----------------------------------------------------------------------===//

TEST(MeshLayoutPlacement, SeveralAxesOnOneDimensionFirstIsOutermost) {
  DeviceMesh mesh = makeMesh({2, 2}, {"dp", "mp"});
  std::vector<DimPlacementSpelling> dpMajor = {{"dp", "mp"}};
  std::vector<DimPlacementSpelling> mpMajor = {{"mp", "dp"}};
  EXPECT_EQ(blockOfRank(expand(mesh, {8}, dpMajor, AxisNumbering::FromLeft)),
            (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(blockOfRank(expand(mesh, {8}, mpMajor, AxisNumbering::FromLeft)),
            (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(blockOf(expand(mesh, {8}, mpMajor, AxisNumbering::FromLeft), 1).box,
            Box({4}, {2}));
}

TEST(MeshLayoutPlacement, PipelineStageIsASelectedSubMesh) {
  // pp x dp x mp = 2 x 2 x 2; stage 1 is ranks 4..7.
  DeviceMesh mesh = makeMesh({2, 2, 2}, {"pp", "dp", "mp"});
  std::optional<DeviceMesh> stage = mesh.select(0, 1);
  ASSERT_TRUE(stage);
  EXPECT_EQ(stage->ranks().vec(), (std::vector<uint32_t>{4, 5, 6, 7}));
  EXPECT_EQ(stage->shape().vec(), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(stage->findAxis("mp"), 2u);
  // The whole mesh's placement still applies: columns over mp, replicated
  // over dp.
  std::vector<RankBlock> blocks =
      expand(*stage, {4, 4}, spellings({-1, "mp"}), AxisNumbering::FromLeft);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blockOf(blocks, 4).box.toString(), "[0:4, 0:2]");
  EXPECT_EQ(blockOf(blocks, 5).box.toString(), "[0:4, 2:4]");
  EXPECT_EQ(blockOf(blocks, 6).box.toString(), "[0:4, 0:2]");
  // Selecting the middle axis keeps the others' order.
  std::optional<DeviceMesh> dp1 = mesh.select(1, 1);
  ASSERT_TRUE(dp1);
  EXPECT_EQ(dp1->ranks().vec(), (std::vector<uint32_t>{2, 3, 6, 7}));
}

TEST(MeshLayoutPlacement, ExpertsStackedOverAnExpertAxis) {
  // 8 experts stacked on dimension 0, EP over 4 ranks: 2 experts per rank.
  DeviceMesh mesh = makeMesh({4}, {"ep"});
  std::vector<RankBlock> blocks = expand(
      mesh, {8, 16, 32}, spellings({"ep", -1, -1}), AxisNumbering::FromLeft);
  for (uint32_t rank = 0; rank < 4; ++rank)
    EXPECT_EQ(blockOf(blocks, rank).box,
              Box({2 * int64_t(rank), 0, 0}, {2, 16, 32}));
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

TEST(MeshLayoutValidation, Meshes) {
  EXPECT_EQ(meshError({}).message, "a mesh needs at least one axis");
  LayoutError zero = meshError({2, 0});
  EXPECT_EQ(zero.message, "mesh axis 1 has size 0; sizes must be at least 1");
  EXPECT_EQ(zero.input, LayoutInput::MeshShape);
  EXPECT_EQ(zero.entry, 1u);
  EXPECT_EQ(meshError({4096, 4096, 2}).message,
            "mesh [4096, 4096, 2] has more than 16777216 processes");
  EXPECT_EQ(meshError({2, 2}, {"dp"}).message,
            "1 axis name for a mesh of 2 axes [2, 2]");
  LayoutError twice = meshError({2, 2}, {"dp", "dp"});
  EXPECT_EQ(twice.message, "mesh axes 0 and 1 are both named 'dp'");
  EXPECT_EQ(twice.input, LayoutInput::AxisNames);
  EXPECT_EQ(twice.entry, 1u);
  EXPECT_EQ(meshError({2}, {"None"}).message,
            "mesh axis 0 cannot be named 'None'");
  EXPECT_EQ(meshError({2, 2}, {}, {0, 1, 2}).message,
            "3 process ids for mesh [2, 2] of 4 processes");
  LayoutError repeated = meshError({2, 2}, {}, {0, 1, 2, 1});
  EXPECT_EQ(repeated.message, "process id 1 appears twice in the mesh");
  EXPECT_EQ(repeated.input, LayoutInput::ProcessIds);
  EXPECT_EQ(repeated.entry, 3u);
  EXPECT_EQ(meshError({2}, {}, {0, -3}).message, "process id -3 is not a rank");

  DeviceMesh mesh = makeMesh({2, 4}, {"dp", "mp"});
  LayoutError select;
  EXPECT_FALSE(mesh.select(1, 4, &select));
  EXPECT_EQ(select.message, "index 4 is outside axis 1 ('mp', size 4)");
  EXPECT_EQ(select.hint, "pick an index from 0 to 3");
  EXPECT_FALSE(mesh.select(2, 0, &select));
  EXPECT_EQ(select.message, "mesh [2, 4] has no axis 2");
}

TEST(MeshLayoutValidation, Placements) {
  DeviceMesh mesh = makeMesh({2, 4}, {"dp", "mp"});
  LayoutError count = resolveError(mesh, {6, 12}, spellings({0}));
  EXPECT_EQ(count.message, "the placement has 1 entry but the tensor has 2 "
                           "dimensions [6, 12]");
  EXPECT_EQ(count.input, LayoutInput::Placement);
  EXPECT_FALSE(count.entry);

  LayoutError range = resolveError(mesh, {6, 12}, spellings({-1, 2}));
  EXPECT_EQ(range.message,
            "mesh axis 2 does not exist: the mesh [2, 4] has 2 axes");
  EXPECT_EQ(range.hint,
            "axes are numbered from the left (dims_mapping), 0 to 1");
  EXPECT_EQ(range.entry, 1u);
  EXPECT_EQ(range.item, 0u);
  EXPECT_EQ(
      resolveError(mesh, {6, 12}, spellings({-2, -1}), AxisNumbering::FromRight)
          .hint,
      "axes are numbered from the right (tensor_map), 0 to 1");

  // -1 inside a list of axes is not "not split".
  std::vector<DimPlacementSpelling> minusOneInList = {{0, -1}, {-1}};
  LayoutError inList = resolveError(mesh, {8, 8}, minusOneInList);
  EXPECT_EQ(inList.message, "mesh axis -1 does not exist: the mesh [2, 4] has "
                            "2 axes; -1 (not split) must stand alone");
  EXPECT_EQ(inList.item, 1u);

  LayoutError alias = resolveError(mesh, {6, 12}, spellings({"mq", -1}));
  EXPECT_EQ(alias.message, "unknown mesh axis 'mq'");
  EXPECT_EQ(alias.hint, "did you mean 'mp'?");
  EXPECT_EQ(alias.entry, 0u);
  DeviceMesh unnamed = makeMesh({2, 4});
  EXPECT_EQ(resolveError(unnamed, {6, 12}, spellings({"mp", -1})).hint,
            "the mesh's axes have no names; give them dim_names (alias_name), "
            "or use axis numbers");

  LayoutError twice = resolveError(mesh, {8, 8}, spellings({"mp", 1}));
  EXPECT_EQ(twice.message, "tensor dimension 1 cannot use mesh axis 1 ('mp', "
                           "size 4), written 1: it already splits tensor "
                           "dimension 0");
  EXPECT_EQ(twice.entry, 1u);
  // tensor_map 0 is the last axis: the same as "mp".
  EXPECT_EQ(
      resolveError(mesh, {8, 8}, spellings({"mp", 0}), AxisNumbering::FromRight)
          .entry,
      1u);

  LayoutError uneven = resolveError(mesh, {6, 10}, spellings({-1, "mp"}));
  EXPECT_EQ(uneven.message, "tensor dimension 1 of size 10 cannot be split "
                            "evenly into 4 blocks by mesh axis 1 ('mp', "
                            "size 4)");
  EXPECT_EQ(uneven.entry, 1u);
  std::vector<DimPlacementSpelling> both = {{"dp", "mp"}};
  EXPECT_EQ(resolveError(mesh, {12}, both).message,
            "tensor dimension 0 of size 12 cannot be split evenly into 8 "
            "blocks by mesh axis 0 ('dp', size 2) x axis 1 ('mp', size 4)");
}

//===----------------------------------------------------------------------===//
// Property: the blocks tile the tensor, each element once per replica
//===----------------------------------------------------------------------===//

TEST(MeshLayoutProperty, BlocksTileTheTensorOncePerReplica) {
  std::mt19937 rng(20261121);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 1000; ++trial) {
    // A random mesh with shuffled process ids.
    size_t meshRank = static_cast<size_t>(uniform(1, 4));
    std::vector<int64_t> meshShape(meshRank);
    int64_t processes = 1;
    for (int64_t &size : meshShape) {
      size = uniform(1, 3);
      processes *= size;
    }
    std::vector<int64_t> ids(static_cast<size_t>(processes));
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = static_cast<int64_t>(i) * 3 + 1;
    std::shuffle(ids.begin(), ids.end(), rng);
    DeviceMesh mesh = makeMesh(meshShape, {}, ids);

    // Every mesh axis splits a random tensor dimension, or none.
    size_t ndim = static_cast<size_t>(uniform(0, 3));
    std::vector<DimPlacementSpelling> fromLeft(ndim), fromRight(ndim);
    std::vector<unsigned> axes(meshRank);
    for (size_t i = 0; i < meshRank; ++i)
      axes[i] = static_cast<unsigned>(i);
    std::shuffle(axes.begin(), axes.end(), rng);
    std::vector<int64_t> blocksPerDim(ndim, 1);
    std::vector<bool> axisUsed(meshRank, false);
    for (unsigned axis : axes) {
      int64_t dim =
          ndim == 0 ? -1 : uniform(-1, static_cast<int64_t>(ndim) - 1);
      if (dim < 0)
        continue;
      fromLeft[dim].push_back(int64_t(axis));
      fromRight[dim].push_back(int64_t(meshRank - 1 - axis));
      blocksPerDim[dim] *= meshShape[axis];
      axisUsed[axis] = true;
    }
    for (size_t dim = 0; dim < ndim; ++dim)
      if (fromLeft[dim].empty()) {
        fromLeft[dim].push_back(int64_t(-1));
        fromRight[dim].push_back(int64_t(-1));
      }
    std::vector<int64_t> shape(ndim);
    for (size_t dim = 0; dim < ndim; ++dim)
      shape[dim] = blocksPerDim[dim] * uniform(0, 3);

    std::vector<RankBlock> blocks =
        expand(mesh, shape, fromLeft, AxisNumbering::FromLeft);
    ASSERT_EQ(blocks.size(), static_cast<size_t>(processes));
    // Both numberings name the same axes.
    std::vector<RankBlock> viaRight =
        expand(mesh, shape, fromRight, AxisNumbering::FromRight);
    ASSERT_EQ(viaRight.size(), blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i)
      EXPECT_EQ(viaRight[i].box, blocks[i].box);

    // Replicas: the product of the unused axes' sizes.
    int64_t replicas = 1;
    for (size_t axis = 0; axis < meshRank; ++axis)
      if (!axisUsed[axis])
        replicas *= meshShape[axis];

    // Brute force: count how often every element is held.
    std::map<test::Point, int64_t> held;
    std::set<uint32_t> ranks;
    for (const RankBlock &block : blocks) {
      ranks.insert(block.rank);
      ASSERT_TRUE(Box::fromShape(shape).contains(block.box));
      test::forEachPoint(block.box, [&](const test::Point &p) { ++held[p]; });
    }
    EXPECT_EQ(ranks, std::set<uint32_t>(ids.begin(), ids.end()));
    int64_t elements = 0;
    test::forEachPoint(Box::fromShape(shape), [&](const test::Point &p) {
      ++elements;
      EXPECT_EQ(held[p], replicas) << "trial " << trial;
    });
    EXPECT_EQ(static_cast<int64_t>(held.size()), elements);

    // Two processes hold the same block exactly when their mesh coordinates
    // agree on every axis that splits something; blockIndex says the same.
    std::vector<int64_t> strides = rowMajorStrides(meshShape);
    for (size_t i = 0; i < blocks.size(); ++i)
      for (size_t j = 0; j < blocks.size(); ++j) {
        bool sameUsedCoordinates = true;
        for (size_t axis = 0; axis < meshRank; ++axis)
          if (axisUsed[axis] &&
              (int64_t(i) / strides[axis]) % meshShape[axis] !=
                  (int64_t(j) / strides[axis]) % meshShape[axis])
            sameUsedCoordinates = false;
        EXPECT_EQ(blocks[i].blockIndex == blocks[j].blockIndex,
                  sameUsedCoordinates);
        if (sameUsedCoordinates) {
          EXPECT_EQ(blocks[i].box, blocks[j].box);
        }
      }
  }
}

//===----------------------------------------------------------------------===//
// The layout spec, end to end
//===----------------------------------------------------------------------===//

struct LoadedSpec {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  std::vector<Diagnostic> diagnostics;
  std::optional<ShardMetadata> metadata;

  explicit LoadedSpec(const std::string &text) {
    diags.setHandler([this](const Diagnostic &d) { diagnostics.push_back(d); });
    metadata = loadLayoutSpecText("spec.json", text, sources, diags);
  }
  std::string where(size_t i = 0) const {
    return sources.describe(diagnostics.at(i).location);
  }
};

/// "rank: [offset] [shape] file" for every shard of `key`.
std::vector<std::string> shardsOf(const ShardMetadata &metadata,
                                  std::string_view key) {
  std::vector<std::string> out;
  std::optional<TensorRef> tensor = metadata.find(key);
  EXPECT_TRUE(tensor) << key;
  if (!tensor)
    return out;
  for (ShardRef shard : tensor->shards())
    out.push_back(std::to_string(shard.rank()) + ": " +
                  formatShape(shard.globalOffset()) + " " +
                  formatShape(shard.localShape()) + " " +
                  std::string(shard.file()));
  return out;
}

TEST(MeshLayoutSpec, PaddleProcessMeshWithStagesAndOptimizerStates) {
  LoadedSpec spec(R"({"format": "aoa-layout", "version": 1,
    "mesh": {"process_mesh": [[3, 2], [1, 0]], "dim_names": ["pp", "mp"]},
    "file_pattern": "{rank}_0.distcp",
    "optimizer_states": ["moment1_0", "beta1_pow_acc_0", "w_0"],
    "tensors": {
      "embed": {"dtype": "bfloat16", "global_shape": [8, 4],
                "dims_mapping": ["mp", -1], "select": {"pp": 0}},
      "head": {"dtype": "float32", "global_shape": [4, 8],
               "dims_mapping": [-1, 1], "select": {"pp": 1}}}})");
  ASSERT_TRUE(spec.metadata)
      << renderDiagnostic(spec.diagnostics.at(0), spec.sources);
  const ShardMetadata &metadata = *spec.metadata;
  // Stage 0 is process_mesh row 0: ranks 3 and 2, in rank order.
  EXPECT_EQ(shardsOf(metadata, "embed"),
            (std::vector<std::string>{"2: [4, 0] [4, 4] 2_0.distcp",
                                      "3: [0, 0] [4, 4] 3_0.distcp"}));
  // Moments follow their parameter's placement.
  EXPECT_EQ(shardsOf(metadata, "embed.moment1_0"),
            (std::vector<std::string>{"2: [4, 0] [4, 4] 2_0.distcp",
                                      "3: [0, 0] [4, 4] 3_0.distcp"}));
  EXPECT_EQ(shardsOf(metadata, "embed.beta1_pow_acc_0"),
            (std::vector<std::string>{"2: [0] [1] 2_0.distcp",
                                      "3: [0] [1] 3_0.distcp"}));
  EXPECT_EQ(metadata.find("embed.w_0")->dtype(), DType::F32);
  EXPECT_EQ(shardsOf(metadata, "head"),
            (std::vector<std::string>{"0: [0, 4] [4, 4] 0_0.distcp",
                                      "1: [0, 0] [4, 4] 1_0.distcp"}));
  // fp32 parameters have no master weight.
  EXPECT_FALSE(metadata.find("head.w_0"));
  EXPECT_TRUE(metadata.find("head.moment1_0"));
  EXPECT_EQ(metadata.tensorCount(), 7u);
}

TEST(MeshLayoutSpec, OutputLoadsBackAsTheSameMetadata) {
  LoadedSpec spec(R"({"format": "aoa-layout", "version": 1,
    "mesh": {"device_matrix": [2, 1, 2, 2, 1],
             "alias_name": ["a", "b", "c", "d", "e"]},
    "meshes": {"last4": {"process_ids": [4, 5, 6, 7]}},
    "tensors": {
      "x": {"dtype": "float16", "global_shape": [1, 1, 2, 2],
            "tensor_map": ["b", "e", "c", "a"]},
      "experts.1.w": {"dtype": "float32", "global_shape": [8],
                      "tensor_map": [0], "mesh": "last4"}}})");
  ASSERT_TRUE(spec.metadata);
  EXPECT_EQ(shardsOf(*spec.metadata, "x")[1],
            "1: [0, 0, 0, 0] [1, 1, 1, 1] rank00001.safetensors");
  EXPECT_EQ(shardsOf(*spec.metadata, "x")[6],
            "6: [0, 0, 1, 1] [1, 1, 1, 1] rank00006.safetensors");
  EXPECT_EQ(shardsOf(*spec.metadata, "experts.1.w")[3],
            "7: [6] [2] rank00007.safetensors");

  std::string text = printShardMetadata(*spec.metadata);
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::optional<ShardMetadata> reloaded =
      loadShardMetadataText("out.json", text, sources, diags);
  ASSERT_TRUE(reloaded);
  EXPECT_EQ(printShardMetadata(*reloaded), text);
}

TEST(MeshLayoutSpec, ErrorsPointAtTheOffendingValue) {
  LoadedSpec spec("{\"format\": \"aoa-layout\", \"version\": 1,\n"
                  " \"mesh\": {\"shape\": [2, 4], \"dim_names\": [\"dp\", "
                  "\"mp\"]},\n"
                  " \"tensors\": {\n"
                  "  \"w\": {\"dtype\": \"float32\", \"global_shape\": [8, "
                  "8], \"dims_mapping\": [[\"dp\", \"mq\"], -1]}}}\n");
  ASSERT_FALSE(spec.metadata);
  ASSERT_EQ(spec.diagnostics.size(), 1u);
  EXPECT_EQ(spec.diagnostics[0].message, "tensor 'w': unknown mesh axis 'mq'");
  // The second item of the first entry: `"mq"`.
  EXPECT_EQ(spec.where(), "spec.json:4:77");
}

/// The first line of a spec with a two-process mesh.
const char *const kTwoRankHeader =
    "{\"format\": \"aoa-layout\", \"version\": 1, \"mesh\": {\"shape\": "
    "[2]},\n";

TEST(MeshLayoutSpec, DuplicateAndEscapedKeysAreFound) {
  LoadedSpec duplicate(std::string(kTwoRankHeader) +
                       " \"tensors\": {\"a\\u0062\": {}, \n \"ab\": {}}}");
  ASSERT_EQ(duplicate.diagnostics.size(), 1u);
  EXPECT_EQ(duplicate.diagnostics[0].message,
            "key 'ab' appears twice in one object");
  EXPECT_EQ(duplicate.where(), "spec.json:3:2");
  EXPECT_EQ(
      duplicate.sources.describe(duplicate.diagnostics[0].notes.at(0).location),
      "spec.json:2:14");

  // A value under an escaped key is still found.
  LoadedSpec escaped(std::string(kTwoRankHeader) +
                     " \"tensors\": {\"a\\\"b\": {\"dtype\": \"f32\", "
                     "\"global_shape\": [2], \"dims_mapping\": [0]}}}");
  ASSERT_EQ(escaped.diagnostics.size(), 1u);
  EXPECT_EQ(escaped.diagnostics[0].message,
            "tensor 'a\"b': unknown dtype 'f32'");
  EXPECT_EQ(escaped.where(), "spec.json:2:32");
}

} // namespace
