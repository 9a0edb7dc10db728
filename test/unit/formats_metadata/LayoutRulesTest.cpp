//===- LayoutRulesTest.cpp - Key patterns, id partitions, flat layouts ----===//
//
// The pieces layout-spec rules are made of: globs and regexes over whole
// keys with $LAYER_ID / $EXPERT_ID captures, layers and experts split over a
// mesh axis, and flat (sharding-v2 style) placements; and the loader placing
// a key list by rules end to end.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/LayoutSpecLoader.h"
#include "aoa/ir/IdPartition.h"
#include "aoa/ir/KeyPattern.h"
#include "aoa/ir/MeshLayout.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace aoa;

namespace {

KeyPattern glob(const std::string &text) {
  KeyPatternError error;
  std::optional<KeyPattern> pattern = KeyPattern::glob(text, &error);
  EXPECT_TRUE(pattern) << text << ": " << error.message;
  return pattern ? *pattern : *KeyPattern::glob("x");
}

KeyPattern regex(const std::string &text) {
  KeyPatternError error;
  std::optional<KeyPattern> pattern = KeyPattern::regex(text, &error);
  EXPECT_TRUE(pattern) << text << ": " << error.message;
  return pattern ? *pattern : *KeyPattern::regex("x");
}

TEST(KeyPatternTest, GlobMatchesWholeKeys) {
  KeyPattern star = glob("model.*.weight");
  EXPECT_TRUE(star.match("model.a.weight"));
  EXPECT_TRUE(star.match("model..weight"));             // `*` may match nothing
  EXPECT_TRUE(star.match("model.layers.0.mlp.weight")); // and dots
  EXPECT_FALSE(star.match("model.a.weight.moment1_0"));
  EXPECT_FALSE(star.match("xmodel.a.weight"));

  EXPECT_TRUE(glob("a?c").match("abc"));
  EXPECT_FALSE(glob("a?c").match("ac"));
  EXPECT_TRUE(glob("[qkv]_proj").match("k_proj"));
  EXPECT_FALSE(glob("[qkv]_proj").match("o_proj"));
  EXPECT_TRUE(glob("[!qkv]_proj").match("o_proj"));
  EXPECT_TRUE(glob("[^qkv]_proj").match("o_proj"));
  EXPECT_TRUE(glob("x[0-9]").match("x7"));
  EXPECT_TRUE(glob("[]]").match("]"));
  EXPECT_TRUE(glob("mlp.{gate,up}_proj").match("mlp.up_proj"));
  EXPECT_FALSE(glob("mlp.{gate,up}_proj").match("mlp.down_proj"));
  EXPECT_TRUE(
      glob("{shared_expert,shared_experts}.w").match("shared_experts.w"));
  EXPECT_TRUE(glob("a\\*b").match("a*b"));
  EXPECT_FALSE(glob("a\\*b").match("axb"));
  EXPECT_TRUE(glob("cost\\$").match("cost$"));
}

TEST(KeyPatternTest, GlobCapturesIds) {
  KeyPattern pattern = glob("model.layers.$LAYER_ID.mlp.experts.$EXPERT_ID.*");
  EXPECT_TRUE(pattern.capturesLayerId());
  EXPECT_TRUE(pattern.capturesExpertId());
  KeyCaptures captures;
  ASSERT_TRUE(pattern.match("model.layers.12.mlp.experts.007.w", &captures));
  EXPECT_EQ(captures.layerId, 12);
  EXPECT_EQ(captures.expertId, 7);
  EXPECT_FALSE(pattern.match("model.layers.x.mlp.experts.1.w"));
  EXPECT_FALSE(pattern.match("model.layers..mlp.experts.1.w"));
  // A placeholder takes the whole run of digits.
  EXPECT_FALSE(glob("l$LAYER_ID[1]").match("l21"));
  // Used twice, it must match the same digits.
  KeyPattern twice = glob("l.$LAYER_ID.to.$LAYER_ID");
  EXPECT_TRUE(twice.match("l.3.to.3"));
  EXPECT_FALSE(twice.match("l.3.to.4"));
  EXPECT_FALSE(twice.match("l.3.to.33"));
  EXPECT_FALSE(glob("x").capturesLayerId());
}

TEST(KeyPatternTest, GlobErrorsSayWhere) {
  KeyPatternError error;
  EXPECT_FALSE(KeyPattern::glob("a.[bc", &error));
  EXPECT_EQ(error.offset, 2u);
  EXPECT_NE(error.message.find("never closed"), std::string::npos);
  EXPECT_FALSE(KeyPattern::glob("a.$LAYER.b", &error));
  EXPECT_EQ(error.offset, 2u);
  EXPECT_NE(error.message.find("'$LAYER'"), std::string::npos);
  EXPECT_FALSE(KeyPattern::glob("{a,*}", &error));
  EXPECT_EQ(error.offset, 3u);
  EXPECT_FALSE(KeyPattern::glob("[z-a]", &error));
  EXPECT_FALSE(KeyPattern::glob("a\\", &error));
  EXPECT_FALSE(KeyPattern::glob("", &error));
}

TEST(KeyPatternTest, GlobCostIsBounded) {
  // Without remembered failures this would take 2^30 steps.
  std::string pattern, key(60, 'a');
  for (int i = 0; i < 30; ++i)
    pattern += "*a";
  pattern += "b";
  EXPECT_FALSE(glob(pattern).match(key));
}

TEST(KeyPatternTest, Regex) {
  KeyPattern pattern =
      regex("model\\.layers\\.$LAYER_ID\\.(self_attn|mlp)\\..*");
  KeyCaptures captures;
  ASSERT_TRUE(pattern.match("model.layers.3.mlp.up", &captures));
  EXPECT_EQ(captures.layerId, 3);
  EXPECT_FALSE(captures.expertId);
  EXPECT_FALSE(pattern.match("model.layers.3.norm"));
  // Full match only.
  EXPECT_FALSE(regex("layers").match("model.layers"));
  // Groups before the placeholder are counted.
  KeyPattern grouped = regex("(a|b)(?:c)\\(($EXPERT_ID)[(]x");
  ASSERT_TRUE(grouped.match("bc(42(x", &captures));
  EXPECT_EQ(captures.expertId, 42);
  // Repeated: a back-reference.
  EXPECT_TRUE(regex("$LAYER_ID-$LAYER_ID").match("5-5"));
  EXPECT_FALSE(regex("$LAYER_ID-$LAYER_ID").match("5-6"));
  KeyPatternError error;
  EXPECT_FALSE(KeyPattern::regex("a(b", &error));
  EXPECT_NE(error.message.find("invalid regex"), std::string::npos);
  EXPECT_FALSE(KeyPattern::regex("$LAYER", &error));
}

TEST(IdPartitionTest, EvenSplitGivesTheRemainderToTheFirstParts) {
  IdPartition partition = IdPartition::even(10, 4); // 3 3 2 2
  EXPECT_EQ(partition.count(), 10);
  EXPECT_EQ(partition.partOf(0), 0);
  EXPECT_EQ(partition.partOf(2), 0);
  EXPECT_EQ(partition.partOf(3), 1);
  EXPECT_EQ(partition.partOf(6), 2);
  EXPECT_EQ(partition.partOf(9), 3);
  EXPECT_FALSE(partition.partOf(10));
  EXPECT_FALSE(partition.partOf(-1));
  IdPartition fewer = IdPartition::even(2, 4); // 1 1 0 0
  EXPECT_EQ(fewer.partOf(1), 1);
  EXPECT_EQ(fewer.idsOf(3), std::make_pair(int64_t(2), int64_t(2)));
}

TEST(IdPartitionTest, Ranges) {
  std::optional<IdPartition> partition =
      IdPartition::fromRanges({{0, 13}, {14, 31}});
  ASSERT_TRUE(partition);
  EXPECT_EQ(partition->count(), 32);
  EXPECT_EQ(partition->partOf(13), 0);
  EXPECT_EQ(partition->partOf(14), 1);
  IdPartitionError error;
  EXPECT_FALSE(IdPartition::fromRanges({{0, 13}, {13, 31}}, &error));
  EXPECT_EQ(error.range, 1u);
  EXPECT_NE(error.message.find("overlaps range 0"), std::string::npos);
  EXPECT_FALSE(IdPartition::fromRanges({{0, 13}, {15, 31}}, &error));
  EXPECT_NE(error.message.find("leaves id 14 in no range"), std::string::npos);
  EXPECT_FALSE(IdPartition::fromRanges({{1, 13}}, &error));
  EXPECT_FALSE(IdPartition::fromRanges({{0, 3}, {5, 4}}, &error));
  EXPECT_NE(error.message.find("empty"), std::string::npos);
  EXPECT_FALSE(IdPartition::fromRanges({}, &error));
}

TEST(FlatPlacementTest, PadsToEqualChunksAndDropsEmptyOnes) {
  std::optional<DeviceMesh> mesh = DeviceMesh::create({2, 4}, {"tp", "dp"}, {});
  ASSERT_TRUE(mesh);
  // [5, 4] split on rows over tp: blocks of 10 elements, each spread over
  // dp's 4 ranks in chunks of 3: [0,3) [3,6) [6,9) [9,10).
  std::optional<TensorPlacement> placement = TensorPlacement::resolve(
      *mesh, {10, 2}, {{AxisSpelling(std::string("tp"))}, {}},
      AxisNumbering::FromLeft);
  ASSERT_TRUE(placement);
  std::vector<RankBlock> blocks =
      expandFlatPlacement(*mesh, *placement, {10, 2}, 1);
  ASSERT_EQ(blocks.size(), 8u);
  EXPECT_EQ(blocks[0].rank, 0u);
  EXPECT_EQ(blocks[0].flat, (FlatElementRange{0, 3}));
  EXPECT_EQ(blocks[3].flat, (FlatElementRange{9, 10}));
  EXPECT_EQ(blocks[4].box.offsets()[0], 5);
  // 2 elements over 4: ranks 2 and 3 hold nothing.
  TensorPlacement whole = TensorPlacement::replicated(1);
  std::optional<DeviceMesh> line = DeviceMesh::create({4}, {"dp"}, {});
  std::vector<RankBlock> small = expandFlatPlacement(*line, whole, {2}, 0);
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(small[1].flat, (FlatElementRange{1, 2}));
  // An empty tensor: coordinate 0 holds it whole.
  std::vector<RankBlock> empty = expandFlatPlacement(*line, whole, {0}, 0);
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_FALSE(empty[0].flat);
}

TEST(LayoutRulesTest, LoaderPlacesAKeyListByRules) {
  LayoutKeyList keys;
  keys.origin = "the test keys";
  keys.keys = {{"b.0.w", DType::BF16, {4, 8}},
               {"a", DType::F32, {8}},
               {"b.1.w", DType::BF16, {4, 8}},
               {"b.1.w.moment1_0", DType::F32, {4, 8}}};
  std::string spec = R"({"format": "aoa-layout", "version": 1,
    "mesh": {"shape": [2, 2], "dim_names": ["pp", "tp"]},
    "stages": {"axis": "pp"},
    "rules": [{"match": "b.$LAYER_ID.w", "dims_mapping": [-1, "tp"]}],
    "default": {"replicate": true, "select": {"pp": -1}}})";
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::ostringstream errors;
  TextDiagnosticPrinter printer(errors, sources, false);
  diags.setHandler(printer.handler());
  std::optional<ShardMetadata> metadata =
      loadLayoutSpecText("spec.json", spec, sources, diags, &keys);
  ASSERT_TRUE(metadata) << errors.str();
  ASSERT_EQ(metadata->tensorCount(), 4u);
  // The key list's order.
  EXPECT_EQ(metadata->tensor(0).key(), "b.0.w");
  EXPECT_EQ(metadata->tensor(1).key(), "a");
  // Layer 0 on stage 0 (ranks 0, 1), layer 1 on stage 1 (ranks 2, 3).
  EXPECT_EQ(metadata->tensor(0).shards()[1].rank(), 1u);
  EXPECT_EQ(metadata->tensor(0).shards()[1].globalOffset()[1], 4);
  EXPECT_EQ(metadata->tensor(2).shards()[0].rank(), 2u);
  // The state follows its model key.
  EXPECT_EQ(metadata->tensor(3).shards()[1].rank(), 3u);
  EXPECT_EQ(metadata->tensor(3).shards()[1].localShape()[1], 4);
  // The default: the last stage, whole.
  EXPECT_EQ(metadata->tensor(1).shards()[0].rank(), 2u);
  EXPECT_EQ(metadata->tensor(1).shards()[0].localShape()[0], 8);
}

} // namespace
