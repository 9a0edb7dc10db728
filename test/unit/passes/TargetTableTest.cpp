//===- TargetTableTest.cpp ------------------------------------------------===//
//
// TargetTable keeps destination keys by TensorId and other keys by name: a
// binding is found the same by key and by tensor, whichever way it was
// inserted; a second insert of a key is refused; erasing one tensor's
// binding leaves the others (and their addresses) alone; a table reset
// without destination metadata (targets derived later, as with --to-hf)
// finds tensors by key; sorted() lists every key once in byte order.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/TargetTable.h"

#include <gtest/gtest.h>

namespace aoa {
namespace {

ShardMetadata destination() {
  ShardMetadataBuilder b;
  for (const char *key : {"w.b", "w.a", "w.c"}) {
    b.addTensor(key, DType::F32, {4});
    b.addShard(0, "d.safetensors", key, {0}, {4});
  }
  return b.finish();
}

TargetBinding binding(TargetBinding::Kind kind, size_t producer) {
  TargetBinding b;
  b.kind = kind;
  b.producer = producer;
  return b;
}

TEST(TargetTableTest, DestinationKeysAreFoundByKeyAndByTensor) {
  ShardMetadata d = destination();
  TargetTable table;
  table.reset(&d);
  TensorId a = d.find("w.a")->id(), b = d.find("w.b")->id();
  EXPECT_TRUE(table.insert("w.a", binding(TargetBinding::Kind::Assigned, 7)));
  EXPECT_TRUE(table.insert(d, b, binding(TargetBinding::Kind::Identity, 3)));
  EXPECT_FALSE(table.insert(d, a, binding(TargetBinding::Kind::Added, 9)));
  EXPECT_FALSE(table.insert("w.b", binding(TargetBinding::Kind::Added, 9)));
  ASSERT_NE(table.find(d, a), nullptr);
  EXPECT_EQ(table.find(d, a), table.find("w.a"));
  EXPECT_EQ(table.find(d, a)->producer, 7u);
  EXPECT_EQ(table.find("w.b")->kind, TargetBinding::Kind::Identity);
  EXPECT_EQ(table.find(d, d.find("w.c")->id()), nullptr);
  EXPECT_EQ(table.find("w.c"), nullptr);
  EXPECT_EQ(table.size(), 2u);
}

TEST(TargetTableTest, OtherKeysAreKeptByName) {
  ShardMetadata d = destination();
  TargetTable table;
  table.reset(&d);
  // A queried optimizer state the destination does not list.
  EXPECT_TRUE(table.insert("w.a.moment1_0",
                           binding(TargetBinding::Kind::Assigned, 1)));
  EXPECT_FALSE(table.insert("w.a.moment1_0",
                            binding(TargetBinding::Kind::Added, 2)));
  ASSERT_NE(table.find("w.a.moment1_0"), nullptr);
  EXPECT_EQ(table.find("w.a.moment1_0")->producer, 1u);
  EXPECT_EQ(table.find("w.a"), nullptr);
  EXPECT_EQ(table.size(), 1u);
}

TEST(TargetTableTest, EraseDropsOneBindingOnly) {
  ShardMetadata d = destination();
  TargetTable table;
  table.reset(&d);
  for (TensorId id = 0; id < d.tensorCount(); ++id)
    table.insert(d, id, binding(TargetBinding::Kind::Assigned, id));
  const TargetBinding *kept = table.find("w.c");
  table.erase(d, d.find("w.a")->id());
  EXPECT_EQ(table.find("w.a"), nullptr);
  EXPECT_EQ(table.find("w.c"), kept);
  EXPECT_EQ(table.size(), 2u);
  // Erased keys may be bound again.
  EXPECT_TRUE(table.insert("w.a", binding(TargetBinding::Kind::Added, 5)));
}

TEST(TargetTableTest, WithoutDestinationTensorsAreFoundByKey) {
  ShardMetadata d = destination();
  TargetTable table;
  table.reset(nullptr);
  EXPECT_TRUE(table.insert("w.b", binding(TargetBinding::Kind::Assigned, 4)));
  TensorId b = d.find("w.b")->id();
  ASSERT_NE(table.find(d, b), nullptr);
  EXPECT_EQ(table.find(d, b)->producer, 4u);
  table.erase(d, b);
  EXPECT_EQ(table.find("w.b"), nullptr);
  EXPECT_EQ(table.size(), 0u);
}

TEST(TargetTableTest, SortedListsEveryKeyInByteOrder) {
  ShardMetadata d = destination();
  TargetTable table;
  table.reset(&d);
  table.insert("w.c", binding(TargetBinding::Kind::Assigned, 0));
  table.insert("w.a", binding(TargetBinding::Kind::Assigned, 1));
  table.insert("w.b.moment1_0", binding(TargetBinding::Kind::Assigned, 2));
  table.insert("a.first", binding(TargetBinding::Kind::Assigned, 3));
  std::vector<std::string> keys;
  for (const auto &[key, b] : table.sorted()) {
    keys.emplace_back(key);
    EXPECT_EQ(b, table.find(key));
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"a.first", "w.a", "w.b.moment1_0",
                                            "w.c"}));
  // A reset empties it.
  table.reset(&d);
  EXPECT_TRUE(table.sorted().empty());
  EXPECT_EQ(table.find("w.a"), nullptr);
}

} // namespace
} // namespace aoa
