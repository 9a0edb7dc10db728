//===- CheckpointComparisonTest.cpp - Two checkpoints, key by key ---------===//
#include "aoa/checkpoint/CheckpointComparison.h"

#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/transforms/ElementValue.h"

#include "CheckpointTestSupport.h"
#include "ScratchDirectory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>

using namespace aoa;
using namespace aoa::checkpoint;
using namespace aoa::runtime;
using aoa::test::LayoutBuilder;
using aoa::test::ScratchDirectory;

namespace {

/// The mixed layout in A, the same keys whole in one file in B.
struct Pair {
  test::SyntheticCheckpoint a{test::mixedLayout()};
  test::SyntheticCheckpoint b{test::wholeLayout(test::mixedLayout())};
  const CheckpointReader &readerA = a.reader, &readerB = b.reader;
};

CheckpointComparison compare(const CheckpointReader &a,
                             const CheckpointReader &b,
                             ComparisonOptions options = {}) {
  Expected<CheckpointComparison> result = compareCheckpoints(a, b, options);
  EXPECT_TRUE(result.ok()) << result.error().toString();
  return result.ok() ? std::move(*result) : CheckpointComparison{};
}

std::string print(const CheckpointComparison &comparison, size_t maxKeys = 20) {
  std::ostringstream os;
  ComparisonPrintOptions options;
  options.maxKeysReported = maxKeys;
  printCheckpointComparison(comparison, os, options);
  return os.str();
}

TEST(CheckpointComparison, SameValuesInAnyLayoutAreIdentical) {
  Pair pair;
  for (size_t chunkBytes : {size_t(7), size_t(1) << 20}) {
    ComparisonOptions options;
    options.chunkBytes = chunkBytes;
    options.verifyHashes = true;
    CheckpointComparison result = compare(pair.readerA, pair.readerB, options);
    EXPECT_TRUE(result.identical()) << print(result);
    EXPECT_EQ(result.keyCount, 6u);
    EXPECT_EQ(result.commonKeyCount, 6u);
    EXPECT_EQ(result.elementsCompared, 60 + 60 + 24 + 24 + 1 + 7);
    EXPECT_EQ(print(result), "identical: 6 keys, 176 elements\n");
  }
}

TEST(CheckpointComparison, AFlippedElementIsFoundWithItsCoordinates) {
  Pair pair;
  // Element [3, 7] of 'w' is element 37 of the whole tensor: bytes 74..75.
  test::flipByte(pair.b.file("all.safetensors"), "w", 74, 0x01);
  // And in A, element [5, 9] of 'm': element 59, the last of 'opt.m' in
  // r2 (which starts at element 47); its top byte holds the sign.
  test::flipByte(pair.a.file("r2.safetensors"), "opt.m", (59 - 47) * 4 + 3,
                 0x80);

  std::vector<std::byte> original(2);
  ASSERT_TRUE(fillSynthetic(test::kRandomFill, "w", DType::BF16, {6, 10},
                            Box({3, 7}, {1, 1}), original.data(), 2)
                  .ok());
  std::vector<std::byte> flipped = original;
  flipped[0] ^= std::byte{0x01};
  for (size_t chunkBytes : {size_t(6), size_t(1) << 20}) {
    ComparisonOptions options;
    options.chunkBytes = chunkBytes;
    CheckpointComparison result = compare(pair.readerA, pair.readerB, options);
    ASSERT_EQ(result.differences.size(), 2u) << print(result);
    const KeyComparison &m = result.differences[0];
    EXPECT_EQ(m.key, "m");
    ASSERT_TRUE(m.data);
    EXPECT_EQ(m.data->count, 1);
    EXPECT_EQ(m.data->firstIndex, (std::vector<int64_t>{5, 9}));
    // The sign bit: A = -B.
    EXPECT_TRUE(m.data->firstValue == "-" + m.data->secondValue ||
                m.data->secondValue == "-" + m.data->firstValue)
        << m.data->firstValue << " " << m.data->secondValue;
    const KeyComparison &wd = result.differences[1];
    EXPECT_EQ(wd.key, "w");
    ASSERT_TRUE(wd.data);
    EXPECT_EQ(wd.data->count, 1);
    EXPECT_EQ(wd.data->firstIndex, (std::vector<int64_t>{3, 7}));
    EXPECT_EQ(wd.data->firstValue, formatElement(DType::BF16, original.data()));
    EXPECT_EQ(wd.data->secondValue, formatElement(DType::BF16, flipped.data()));
    double difference =
        std::fabs(elementAsDouble(DType::BF16, original.data()) -
                  elementAsDouble(DType::BF16, flipped.data()));
    EXPECT_EQ(wd.data->maxAbsDifference, difference);
    EXPECT_GT(difference, 0);
    EXPECT_TRUE(wd.replicas.empty());

    std::string text = print(result);
    std::string wLine = "key 'w': 1 of 60 elements differ; first at [3, 7]: "
                        "A = " +
                        wd.data->firstValue + ", B = " + wd.data->secondValue +
                        "; max |A - B| = ";
    EXPECT_NE(text.find(wLine), std::string::npos) << text;
    EXPECT_NE(text.find("different: 2 of 6 keys differ; 176 elements "
                        "compared\n"),
              std::string::npos)
        << text;
  }
  // A tolerance above the differences makes them equal.
  ComparisonOptions tolerant;
  tolerant.absoluteTolerance = 10.0;
  EXPECT_TRUE(compare(pair.readerA, pair.readerB, tolerant).identical());
}

/// A one-file checkpoint holding `values` as key "x" (f32 [n]).
CheckpointReader floatCheckpoint(const ScratchDirectory &dir,
                                 const std::vector<uint32_t> &bits) {
  Expected<SafetensorsWriter> file = SafetensorsWriter::create(
      dir.file("x.safetensors"),
      {TensorDeclaration{"x", DType::F32, {int64_t(bits.size())}}});
  EXPECT_TRUE(file.ok());
  EXPECT_TRUE(file->writeTensor("x", bits.data(), bits.size() * 4).ok());
  EXPECT_TRUE(file->commit().ok());
  LayoutBuilder b;
  b.key("x", DType::F32, {int64_t(bits.size())})
      .shard(0, "x.safetensors", {0}, {int64_t(bits.size())});
  return CheckpointReader(dir.path(), b.finish());
}

TEST(CheckpointComparison, FloatsCompareBitForBit) {
  ScratchDirectory dirA, dirB;
  // +0, a NaN, 1, 2 against -0, the same NaN, 1, 2 + 1 ulp.
  CheckpointReader a =
      floatCheckpoint(dirA, {0x00000000, 0x7fc00001, 0x3f800000, 0x40000000});
  CheckpointReader b =
      floatCheckpoint(dirB, {0x80000000, 0x7fc00001, 0x3f800000, 0x40000001});
  CheckpointComparison exact = compare(a, b);
  ASSERT_EQ(exact.differences.size(), 1u);
  const ElementDifferences &data = *exact.differences[0].data;
  EXPECT_EQ(data.count, 2);
  EXPECT_EQ(data.firstIndex, (std::vector<int64_t>{0}));
  EXPECT_EQ(data.firstValue, "0");
  EXPECT_EQ(data.secondValue, "-0");
  EXPECT_EQ(data.maxAbsDifference, std::ldexp(1.0, -22));
  EXPECT_EQ(print(exact), "key 'x': 2 of 4 elements differ; first at [0]: "
                          "A = 0, B = -0; max |A - B| = 2.384185791015625e-07\n"
                          "different: 1 of 1 keys differ; 4 elements "
                          "compared\n");

  // With a tolerance, -0 equals +0 and 1 ulp is within 1e-6.
  ComparisonOptions tolerant;
  tolerant.absoluteTolerance = 1e-6;
  EXPECT_TRUE(compare(a, b, tolerant).identical());
  tolerant.absoluteTolerance = 0;
  CheckpointComparison zero = compare(a, b, tolerant);
  ASSERT_EQ(zero.differences.size(), 1u);
  EXPECT_EQ(zero.differences[0].data->count, 1);
  EXPECT_EQ(zero.differences[0].data->firstIndex, (std::vector<int64_t>{3}));

  // NaNs with other bits differ, tolerance or not, and make the maximum NaN.
  ScratchDirectory dirC;
  CheckpointReader c =
      floatCheckpoint(dirC, {0x00000000, 0x7fc00002, 0x3f800000, 0x40000000});
  tolerant.absoluteTolerance = 1e30;
  CheckpointComparison nan = compare(a, c, tolerant);
  ASSERT_EQ(nan.differences.size(), 1u);
  EXPECT_EQ(nan.differences[0].data->count, 1);
  EXPECT_TRUE(std::isnan(nan.differences[0].data->maxAbsDifference));
  EXPECT_EQ(nan.differences[0].data->firstValue, "nan (bits 0x7fc00001)");
  EXPECT_EQ(nan.differences[0].data->secondValue, "nan (bits 0x7fc00002)");
}

TEST(CheckpointComparison, KeysDTypesAndShapes) {
  LayoutBuilder a, b;
  a.key("a", DType::F32, {4}).shard(0, "f.safetensors", {0}, {4});
  a.key("b", DType::F32, {4}).shard(0, "f.safetensors", {0}, {4});
  a.key("c", DType::I32, {2, 2}).shard(0, "f.safetensors", {0, 0}, {2, 2});
  a.key("e", DType::U8, {3}).shard(0, "f.safetensors", {0}, {3});
  b.key("e", DType::U8, {3}).shard(0, "g.safetensors", {0}, {3});
  b.key("d", DType::F32, {4}).shard(0, "g.safetensors", {0}, {4});
  b.key("c", DType::I32, {4}).shard(0, "g.safetensors", {0}, {4});
  b.key("b", DType::BF16, {4}).shard(0, "g.safetensors", {0}, {4});
  test::SyntheticCheckpoint first(a.finish()), second(b.finish());
  CheckpointComparison result = compare(first.reader, second.reader);
  EXPECT_EQ(result.keyCount, 5u);
  EXPECT_EQ(result.commonKeyCount, 3u);
  EXPECT_EQ(result.elementsCompared, 3);
  EXPECT_EQ(print(result),
            "key 'a': only in A\n"
            "key 'b': dtype float32 in A, bfloat16 in B\n"
            "key 'c': shape [2, 2] in A, [4] in B\n"
            "key 'd': only in B\n"
            "different: 4 of 5 keys differ (1 only in A, 1 only in B); 3 "
            "elements compared\n");
  EXPECT_EQ(print(result, 1), "key 'a': only in A\n"
                              "... and 3 more differing keys\n"
                              "different: 4 of 5 keys differ (1 only in A, 1 "
                              "only in B); 3 elements compared\n");
}

TEST(CheckpointComparison, ReplicasMustAgree) {
  Pair pair;
  // Element [2, 1] of 'w' in its replica in r2 (bytes of element 2*5+1).
  test::flipByte(pair.a.file("r2.safetensors"), "w", 22, 0x40);
  CheckpointComparison result = compare(pair.readerA, pair.readerB);
  ASSERT_EQ(result.differences.size(), 1u) << print(result);
  const KeyComparison &w = result.differences[0];
  EXPECT_FALSE(w.data) << "A's first shard agrees with B";
  ASSERT_EQ(w.replicas.size(), 1u);
  const ReplicaDisagreement &replica = w.replicas[0];
  EXPECT_EQ(replica.checkpoint, 0);
  EXPECT_EQ(replica.shard, 2u);
  EXPECT_EQ(replica.earlierShard, 0u);
  EXPECT_EQ(replica.differences.count, 1);
  EXPECT_EQ(replica.differences.firstIndex, (std::vector<int64_t>{2, 1}));
  std::string text = print(result);
  std::string expected =
      "key 'w': in A, shard 2 (r2.safetensors, 'w') disagrees with its "
      "replica shard 0 (r0.safetensors, 'w') in 1 element; first at [2, 1]: " +
      replica.differences.secondValue + " vs " +
      replica.differences.firstValue + "; max difference ";
  EXPECT_EQ(text.substr(0, expected.size()), expected) << text;

  // Also when B is the sharded one, and not at all when not asked.
  CheckpointComparison swapped = compare(pair.readerB, pair.readerA);
  ASSERT_EQ(swapped.differences.size(), 1u);
  EXPECT_EQ(swapped.differences[0].replicas[0].checkpoint, 1);
  ComparisonOptions noReplicas;
  noReplicas.checkReplicas = false;
  EXPECT_TRUE(compare(pair.readerA, pair.readerB, noReplicas).identical());

  // The recorded hash of the damaged shard no longer matches.
  noReplicas.verifyHashes = true;
  CheckpointComparison hashed = compare(pair.readerA, pair.readerB, noReplicas);
  ASSERT_EQ(hashed.differences.size(), 1u);
  ASSERT_EQ(hashed.differences[0].hashes.size(), 1u);
  EXPECT_EQ(hashed.differences[0].hashes[0].shard, 2u);
  EXPECT_NE(print(hashed).find("key 'w': in A, shard 2 (r2.safetensors, 'w'): "
                               "the data's xxh3 is "),
            std::string::npos)
      << print(hashed);
}

TEST(CheckpointComparison, UnreadableDataIsAnError) {
  Pair pair;
  std::filesystem::remove(pair.b.file("all.safetensors"));
  Expected<CheckpointComparison> result =
      compareCheckpoints(pair.readerA, pair.readerB);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            pair.b.file("all.safetensors") +
                ": the file does not exist, but the checkpoint's metadata "
                "stores shard 0 of key 'm' there");
}

} // namespace
