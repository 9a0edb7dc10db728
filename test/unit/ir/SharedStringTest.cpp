//===- SharedStringTest.cpp - Shared immutable strings and their pool -----===//
//
// A SharedString must read and compare like the std::string it replaced in
// plan::StoredTensor, and a pool must hand out one string per distinct text.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/SharedString.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

using namespace aoa;

namespace {

TEST(SharedStringTest, ReadsAndComparesLikeItsText) {
  SharedString key = std::string("model.layers.0.mlp.down_proj.weight");
  EXPECT_EQ(key.str(), "model.layers.0.mlp.down_proj.weight");
  EXPECT_EQ(key.size(), 35u);
  EXPECT_FALSE(key.empty());
  EXPECT_TRUE(key == "model.layers.0.mlp.down_proj.weight");
  EXPECT_TRUE("model.layers.0.mlp.down_proj.weight" == key);
  EXPECT_TRUE(key == std::string_view("model.layers.0.mlp.down_proj.weight"));
  EXPECT_TRUE(key != std::string("model.layers.0.mlp.up_proj.weight"));
  EXPECT_TRUE(SharedString("a") < SharedString("b"));
  EXPECT_FALSE(SharedString("b") < SharedString("a"));
  EXPECT_EQ(key + ".moment1", "model.layers.0.mlp.down_proj.weight.moment1");
  EXPECT_EQ("w:" + SharedString("x"), "w:x");
  std::ostringstream os;
  os << key;
  EXPECT_EQ(os.str(), key.str());
  std::string_view view = key;
  const std::string &text = key;
  EXPECT_EQ(view.data(), text.data()); // both read the one shared string
}

TEST(SharedStringTest, EmptyByDefaultAndFromEmptyText) {
  SharedString none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none, "");
  EXPECT_EQ(none, SharedString(std::string()));
  EXPECT_STREQ(none.c_str(), "");
}

TEST(SharedStringTest, CopiesShareAndEqualTextFromElsewhereCompares) {
  SharedString a("w"), copy = a, b("w");
  EXPECT_TRUE(copy.sharesWith(a));
  EXPECT_FALSE(b.sharesWith(a)); // made separately
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::hash<SharedString>()(a), std::hash<SharedString>()(b));
}

TEST(SharedStringTest, IsOnePointerAndOutlivesItsFirstOwner) {
  // Two per stored tensor, millions of tensors: one pointer each.
  EXPECT_EQ(sizeof(SharedString), sizeof(void *));
  SharedString kept;
  {
    SharedString first(std::string("model.layers.3.self_attn.o_proj.weight"));
    kept = first;
    SharedString moved = std::move(first);
    EXPECT_TRUE(first.empty());
    EXPECT_TRUE(moved.sharesWith(kept));
  }
  EXPECT_EQ(kept, "model.layers.3.self_attn.o_proj.weight");
  const SharedString &alias = kept;
  kept = alias; // self-assignment keeps the string
  EXPECT_EQ(kept, "model.layers.3.self_attn.o_proj.weight");
}

TEST(SharedStringTest, CopiesOnSeveralThreadsShareOneCount) {
  // The schedule and the binary writer copy and drop a plan's names on
  // several threads; a count that is not atomic frees the string early
  // (ASan reports the use after free).
  SharedString shared(std::string("model.embed_tokens.weight"));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&shared] {
      for (int i = 0; i < 20000; ++i) {
        SharedString copy = shared;
        SharedString other = copy;
        copy = SharedString();
        ASSERT_EQ(other.size(), 25u);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(shared, "model.embed_tokens.weight");
}

TEST(SharedStringTest, PoolHandsOutOneStringPerText) {
  SharedStringPool pool;
  std::string name = "experts.7.w1";
  SharedString first = pool.intern(name);
  name[8] = '8'; // the pool keeps its own bytes, not the caller's
  SharedString other = pool.intern(name);
  SharedString again = pool.intern("experts.7.w1");
  EXPECT_TRUE(again.sharesWith(first));
  EXPECT_FALSE(other.sharesWith(first));
  EXPECT_EQ(first, "experts.7.w1");
  EXPECT_EQ(other, "experts.8.w1");
  EXPECT_EQ(pool.size(), 2u);
}

TEST(SharedStringTest, WorksAsAMapKeyAndAsAStringArgument) {
  std::map<SharedString, int> ordered{{SharedString("b"), 2},
                                      {SharedString("a"), 1}};
  EXPECT_EQ(ordered.begin()->first, "a");
  std::unordered_map<std::string, int> byText{{"a", 1}};
  SharedString a("a");
  EXPECT_EQ(byText.at(a), 1); // converts to const std::string &
}

} // namespace
