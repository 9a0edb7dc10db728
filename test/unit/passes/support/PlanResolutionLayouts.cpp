//===- PlanResolutionLayouts.cpp - Random and hand-built shard layouts ----===//
//
// The layouts of PlanResolutionModel.h's cases: uneven grids of 1..4 parts
// per axis, 1..3 flat ranges that start and end mid-row, replicas on distinct
// ranks 0..5 with one file per rank and side, and the helpers the tests use
// to build layouts by hand.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionModel.h"

#include <algorithm>

namespace aoa::plan_resolution_test {

/// Cuts [0, extent) into 1..4 intervals (not necessarily even).
std::vector<Interval> randomCuts(Rng &rng, int64_t extent) {
  int64_t parts = rng.range(1, std::min<int64_t>(4, extent));
  std::vector<int64_t> cuts = rng.distinct(1, extent - 1, size_t(parts - 1));
  std::vector<Interval> out;
  int64_t begin = 0;
  for (int64_t c : cuts) {
    out.push_back({begin, c});
    begin = c;
  }
  out.push_back({begin, extent});
  return out;
}

std::vector<Box> randomGrid(Rng &rng, const std::vector<int64_t> &shape) {
  std::vector<std::vector<Interval>> axes;
  for (int64_t extent : shape)
    axes.push_back(randomCuts(rng, extent));
  std::vector<Box> boxes;
  std::vector<size_t> at(shape.size(), 0);
  while (true) {
    llvm::SmallVector<Interval, 4> dims;
    for (size_t i = 0; i < shape.size(); ++i)
      dims.push_back(axes[i][at[i]]);
    boxes.push_back(Box(dims));
    size_t i = shape.size();
    while (i > 0) {
      --i;
      if (++at[i] < axes[i].size())
        break;
      at[i] = 0;
      if (i == 0)
        return boxes;
    }
    if (shape.empty())
      return boxes;
  }
}

/// 1..3 contiguous non-empty ranges covering [0, volume).
std::vector<FlatElementRange> randomRanges(Rng &rng, int64_t volume) {
  int64_t parts = rng.range(1, std::min<int64_t>(3, volume));
  std::vector<int64_t> cuts = rng.distinct(1, volume - 1, size_t(parts - 1));
  std::vector<FlatElementRange> out;
  int64_t begin = 0;
  for (int64_t c : cuts) {
    out.push_back({begin, c});
    begin = c;
  }
  out.push_back({begin, volume});
  return out;
}

std::string fileOf(const char *side, uint32_t rank) {
  return std::string(side) + "_r" + std::to_string(rank) + ".safetensors";
}

/// A source layout: units (a box, or one flat range of it) tile the key;
/// each unit has 1..3 replicas on distinct ranks.
void randomSourceLayout(Rng &rng, KeySpec &k, bool replicas, bool flat) {
  int counter = 0;
  for (const Box &box : randomGrid(rng, k.shape)) {
    std::vector<std::optional<FlatElementRange>> units;
    if (flat && rng.chance(0.4))
      for (const FlatElementRange &r : randomRanges(rng, box.volume()))
        units.push_back(r);
    else
      units.push_back(std::nullopt);
    for (const std::optional<FlatElementRange> &unit : units) {
      size_t copies =
          replicas && rng.chance(0.35) ? size_t(rng.range(2, 3)) : 1;
      for (int64_t rank : rng.distinct(0, kMaxRank, copies)) {
        ShardSpec s;
        s.rank = uint32_t(rank);
        s.file = fileOf("src", s.rank);
        s.name = k.key + "@" + std::to_string(counter++);
        s.box = box;
        s.flat = unit;
        // A range of the whole box is the same as no range.
        if (s.flat && s.flat->begin == 0 && s.flat->end == box.volume() &&
            rng.chance(0.5))
          s.flat.reset();
        else if (!s.flat && rng.chance(0.15))
          s.flat = FlatElementRange{0, box.volume()};
        k.shards.push_back(s);
      }
    }
  }
  rng.shuffle(k.shards);
}

/// A destination layout: every box of a grid on 1..3 replicas (distinct
/// ranks); each replica whole, or split into 1..3 flat ranges stored on
/// random ranks (replicas may split differently).
void randomDestinationLayout(Rng &rng, KeySpec &k) {
  int counter = 0;
  for (const Box &box : randomGrid(rng, k.shape)) {
    size_t copies = rng.chance(0.3) ? size_t(rng.range(2, 3)) : 1;
    for (int64_t rank : rng.distinct(0, kMaxRank, copies)) {
      if (rng.chance(0.35)) {
        for (const FlatElementRange &r : randomRanges(rng, box.volume())) {
          ShardSpec s;
          s.rank = rng.chance(0.5) ? uint32_t(rank)
                                   : uint32_t(rng.range(0, kMaxRank));
          s.file = fileOf("dst", s.rank);
          s.name = k.key + "@" + std::to_string(counter++);
          s.box = box;
          s.flat = r;
          k.shards.push_back(s);
        }
      } else {
        ShardSpec s;
        s.rank = uint32_t(rank);
        s.file = fileOf("dst", s.rank);
        s.name = k.key + "@" + std::to_string(counter++);
        s.box = box;
        k.shards.push_back(s);
      }
    }
  }
  rng.shuffle(k.shards);
}

std::vector<int64_t> randomShape(Rng &rng, size_t rank, int64_t maxExtent) {
  std::vector<int64_t> shape;
  for (size_t i = 0; i < rank; ++i)
    shape.push_back(rng.range(1, maxExtent));
  return shape;
}

DType randomFloat(Rng &rng) {
  static const DType kTypes[] = {DType::F32, DType::F32, DType::F16,
                                 DType::BF16, DType::F64};
  return kTypes[rng.range(0, 4)];
}

KeySpec sourceKey(Rng &rng, std::string key, DType dtype,
                  std::vector<int64_t> shape) {
  KeySpec k;
  k.key = std::move(key);
  k.dtype = dtype;
  k.shape = std::move(shape);
  randomSourceLayout(rng, k);
  return k;
}

KeySpec destinationKey(Rng &rng, std::string key, DType dtype,
                       std::vector<int64_t> shape) {
  KeySpec k;
  k.key = std::move(key);
  k.dtype = dtype;
  k.shape = std::move(shape);
  randomDestinationLayout(rng, k);
  return k;
}

/// Hand-built layouts.
ShardSpec shard(uint32_t rank, const char *side, std::string name, Box box,
                std::optional<FlatElementRange> flat) {
  ShardSpec s;
  s.rank = rank;
  s.file = fileOf(side, rank);
  s.name = std::move(name);
  s.box = std::move(box);
  s.flat = flat;
  return s;
}

KeySpec key(std::string name, std::vector<int64_t> shape,
            std::vector<ShardSpec> shards, DType dtype) {
  KeySpec k;
  k.key = std::move(name);
  k.dtype = dtype;
  k.shape = std::move(shape);
  k.shards = std::move(shards);
  return k;
}

Case rowsToColumns(const std::set<int> &overlapping) {
  Case c;
  c.kind = "rows-to-columns";
  for (int i = 0; i < 2500; ++i) {
    std::string name = "t" + std::to_string(i);
    std::vector<ShardSpec> stored{shard(0, "src", name, Box({0, 0}, {2, 6})),
                                  shard(1, "src", name, Box({2, 0}, {2, 6}))};
    if (overlapping.count(i))
      stored.push_back(shard(1, "src", name + "@overlap", Box({1, 0}, {2, 6})));
    c.source.push_back(key(name, {4, 6}, stored));
    c.destination.push_back(key(name, {4, 6},
                                {shard(0, "dst", name, Box({0, 0}, {4, 3})),
                                 shard(1, "dst", name, Box({0, 3}, {4, 3}))}));
  }
  return c;
}

} // namespace aoa::plan_resolution_test
