//===- KeySpaceTest.cpp ----------------------------------------------------===//
//
// KeySpace against its definition spelled out naively: a name stands for
// the stored key itself, else (for a model key) for `name + suffix` with the
// suffixes of the states sharded like it, looked up one by one in the
// metadata. The key space looks a model key's tensors up once, when it is
// built; the answers must not change, including for a model key that is
// also the suffixed spelling of another (`b.w_0` beside `b.w_0.moment1_0`),
// a model key with no tensor of its own, and states that disagree; and
// storedForms names every optimizer state's tensor, beta-pow ones included.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/KeySpace.h"

#include "aoa/ir/OptimizerState.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace aoa {
namespace {

struct Stored {
  std::string key;
  std::vector<int64_t> shape;
  /// The shards, each cut along axis 0 into this many equal parts.
  int64_t partsAlongAxis0;
};

ShardMetadata build(const std::vector<Stored> &keys) {
  ShardMetadataBuilder builder;
  for (const Stored &k : keys) {
    EXPECT_TRUE(builder.addTensor(k.key, DType::F32, k.shape).has_value());
    std::vector<int64_t> local = k.shape;
    local[0] /= k.partsAlongAxis0;
    for (int64_t p = 0; p < k.partsAlongAxis0; ++p) {
      std::vector<int64_t> offset(k.shape.size(), 0);
      offset[0] = p * local[0];
      EXPECT_TRUE(builder
                      .addShard(static_cast<uint32_t>(p), "f", k.key, offset,
                                local, std::nullopt)
                      .has_value());
    }
  }
  return builder.finish();
}

constexpr std::string_view kShardedLike[] = {
    std::string_view(), ".w_0", ".moment1_0", ".moment2_0"};

/// The stored tensors `name` stands for, by the definition.
std::vector<TensorRef> naiveTensors(const ShardMetadata &metadata,
                                    const KeySpace &keys,
                                    const std::string &name) {
  std::vector<TensorRef> tensors;
  if (!keys.isModelKey(name)) {
    if (std::optional<TensorRef> t = metadata.find(name))
      tensors.push_back(*t);
    return tensors;
  }
  for (std::string_view suffix : kShardedLike)
    if (std::optional<TensorRef> t = metadata.find(name + std::string(suffix)))
      tensors.push_back(*t);
  return tensors;
}

/// The distinct [begin, end) of a tensor's shards along axis 0, joined.
std::string intervalsAlongAxis0(TensorRef tensor) {
  std::set<std::pair<int64_t, int64_t>> intervals;
  for (ShardRef shard : tensor.shards())
    intervals.emplace(shard.globalOffset()[0],
                      shard.globalOffset()[0] + shard.localShape()[0]);
  return std::to_string(intervals.size());
}

const std::vector<Stored> kKeys = {
    {"a", {8, 4}, 2},
    {"a.w_0", {8, 4}, 2},
    {"a.moment1_0", {8, 4}, 2},
    {"a.beta1_pow_acc_0", {1}, 1},
    {"c.beta2_pow_acc_0", {1}, 1},
    {"b.w_0", {6, 2}, 3},
    {"b.w_0.moment1_0", {6, 2}, 3},
    {"c.moment1_0", {4}, 2},
    {"d", {3, 5}, 1},
    {"e.moment2_0", {4, 4}, 4},
    {"e.w_0", {4, 4, 2}, 4},
    {"f", {8}, 2},
    {"f.moment2_0", {8}, 4},
};

TEST(KeySpaceTest, AnswersAsTheDefinitionSpelledOut) {
  ShardMetadata metadata = build(kKeys);
  KeySpace keys(metadata, "source");
  std::vector<std::string> names(keys.names().begin(), keys.names().end());
  for (const char *other : {"g", "a.moment2_0", "c", "b", "", "a.w"})
    names.push_back(other);
  for (const std::string &name : names) {
    SCOPED_TRACE("name '" + name + "'");
    // Every stored form is the key `name` + suffix, or none.
    KeySpace::StoredForms forms = keys.storedForms(name);
    for (size_t i = 0; i < forms.size(); ++i) {
      std::string suffix(i == 0 ? std::string_view() : kOptimizerSuffixes[i - 1]);
      EXPECT_EQ(KeySpace::storedFormIndex(suffix), i);
      std::optional<TensorRef> t = metadata.find(name + suffix);
      EXPECT_EQ(forms[i], t ? t->id() : KeySpace::kNoTensor) << suffix;
    }
    std::vector<TensorRef> tensors = naiveTensors(metadata, keys, name);
    std::optional<TensorRef> representative = keys.representative(name);
    ASSERT_EQ(representative.has_value(), !tensors.empty());
    EXPECT_EQ(keys.contains(name),
              keys.isModelKey(name) || metadata.find(name).has_value());
    if (tensors.empty()) {
      EXPECT_EQ(keys.rankOf(name), std::nullopt);
      std::string why;
      EXPECT_EQ(keys.shardCountAlongAxis(name, 0, why), std::nullopt);
      EXPECT_FALSE(why.empty());
      continue;
    }
    EXPECT_EQ(representative->key(), tensors.front().key());
    EXPECT_EQ(keys.rankOf(name), tensors.front().ndim());
    std::set<std::string> counts;
    for (TensorRef t : tensors)
      counts.insert(intervalsAlongAxis0(t));
    std::string why;
    std::optional<int64_t> count = keys.shardCountAlongAxis(name, 0, why);
    if (counts.size() == 1) {
      ASSERT_TRUE(count.has_value()) << why;
      EXPECT_EQ(std::to_string(*count), *counts.begin());
    } else {
      EXPECT_EQ(count, std::nullopt);
      EXPECT_NE(why.find("shards but"), std::string::npos) << why;
    }
  }
}

TEST(KeySpaceTest, TheCasesTheDefinitionTurnsOn) {
  ShardMetadata metadata = build(kKeys);
  KeySpace keys(metadata, "source");
  // `b.w_0` is a state of `b` and a model key of its own, stored itself.
  EXPECT_TRUE(keys.isModelKey("b.w_0"));
  EXPECT_EQ(keys.representative("b.w_0")->key(), "b.w_0");
  EXPECT_EQ(keys.representative("b")->key(), "b.w_0");
  // `c` has only a state; `e`'s master weight comes before its moment.
  EXPECT_EQ(keys.representative("c")->key(), "c.moment1_0");
  EXPECT_EQ(keys.rankOf("e"), 3u);
  EXPECT_EQ(KeySpace::storedFormIndex(".moment3_0"), std::nullopt);
  EXPECT_EQ(keys.storedForms("c")[5], metadata.find("c.beta2_pow_acc_0")->id());
  // The beta-pow accumulators are scalars and do not count.
  std::string why;
  EXPECT_EQ(keys.shardCountAlongAxis("a", 0, why), 2);
  // States that disagree are named.
  EXPECT_EQ(keys.shardCountAlongAxis("f", 0, why), std::nullopt);
  EXPECT_EQ(why, "'f' has 2 shards but 'f.moment2_0' has 4");
  EXPECT_EQ(keys.shardCountAlongAxis("g", 0, why), std::nullopt);
  EXPECT_EQ(why, "'g' is not in the source metadata");
}

} // namespace
} // namespace aoa
