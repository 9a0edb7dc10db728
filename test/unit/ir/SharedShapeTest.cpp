//===- SharedShapeTest.cpp - Shapes shared by reference --------------------===//
//
// A SharedShape must read and compare like the extents it replaced in
// plan::StoredTensor and plan::BufferDecl, share one list between copies
// (also on several threads), and be one pointer.
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/SharedShape.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using namespace aoa;

namespace {

TEST(SharedShapeTest, ReadsAndComparesLikeItsExtents) {
  SharedShape shape{129280, 7168};
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_FALSE(shape.empty());
  EXPECT_EQ(shape[0], 129280);
  EXPECT_EQ(shape[1], 7168);
  EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()),
            (std::vector<int64_t>{129280, 7168}));
  EXPECT_EQ(shape.vec(), (std::vector<int64_t>{129280, 7168}));
  llvm::ArrayRef<int64_t> extents = shape;
  EXPECT_EQ(extents.data(), shape.data()); // a view of the shared list
  EXPECT_TRUE(shape == llvm::ArrayRef<int64_t>({129280, 7168}));
  EXPECT_TRUE(shape != llvm::ArrayRef<int64_t>({129280}));
  EXPECT_TRUE(shape != SharedShape({7168, 129280}));
  EXPECT_TRUE(shape == SharedShape(std::vector<int64_t>{129280, 7168}));
}

TEST(SharedShapeTest, RankZeroByDefaultAndFromNoExtents) {
  SharedShape scalar;
  EXPECT_TRUE(scalar.empty());
  EXPECT_EQ(scalar.size(), 0u);
  EXPECT_EQ(scalar.begin(), scalar.end());
  EXPECT_EQ(scalar, SharedShape(llvm::ArrayRef<int64_t>()));
  EXPECT_NE(scalar, SharedShape({1}));
}

TEST(SharedShapeTest, CopiesShareAndAssignReplacesWhole) {
  SharedShape a{4, 6}, copy = a, b{4, 6};
  EXPECT_TRUE(copy.sharesWith(a));
  EXPECT_FALSE(b.sharesWith(a)); // made separately
  EXPECT_EQ(a, b);
  std::vector<int64_t> five = {1, 2, 3, 4, 5};
  copy.assign(five.begin(), five.end()); // beyond the inline 4 axes
  EXPECT_FALSE(copy.sharesWith(a));
  EXPECT_EQ(copy.vec(), five);
  EXPECT_EQ(a.vec(), (std::vector<int64_t>{4, 6})); // untouched
}

TEST(SharedShapeTest, IsOnePointerAndOutlivesItsFirstOwner) {
  // One per stored tensor and buffer, millions of each: one pointer.
  EXPECT_EQ(sizeof(SharedShape), sizeof(void *));
  SharedShape kept;
  {
    SharedShape first{2048, 7168};
    kept = first;
    SharedShape moved = std::move(first);
    EXPECT_TRUE(first.empty());
    EXPECT_TRUE(moved.sharesWith(kept));
  }
  EXPECT_EQ(kept.vec(), (std::vector<int64_t>{2048, 7168}));
  const SharedShape &alias = kept;
  kept = alias; // self-assignment keeps the list
  EXPECT_EQ(kept.vec(), (std::vector<int64_t>{2048, 7168}));
}

TEST(SharedShapeTest, CopiesOnSeveralThreadsShareOneCount) {
  // The schedule emits rounds and the binary writer encodes ranks on
  // several threads; a count that is not atomic frees the list early (ASan
  // reports the use after free).
  SharedShape shared{16160, 7168};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&shared] {
      for (int i = 0; i < 20000; ++i) {
        SharedShape copy = shared;
        SharedShape other = copy;
        copy = SharedShape();
        ASSERT_EQ(other[1], 7168);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(shared.vec(), (std::vector<int64_t>{16160, 7168}));
}

} // namespace
