//===- StridedCopyTest.cpp - Strided copies against copyRegion ------------===//
//
// describeRegionCopy + runStridedCopyOnHost (the emulated device: the CUDA
// kernels' code run on the CPU, block by block and thread by thread) must
// write the very bytes copyRegion writes, including the bytes around the
// destination region, which both must leave alone. Random shapes, regions,
// permutations and dtype pairs, with elements drawn from the hard cases of
// every cast (NaN payloads, infinities, subnormals, ties), and pointers at
// odd addresses. Dedicated cases take every path of the kernels: tiled
// transposes with partial tiles and batches, contiguous runs moved as wider
// words, elementwise gathers with large extents (fast division).
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/transforms/FloatConversion.h"
#include "aoa/runtime/transforms/RegionCopy.h"
#include "aoa/runtime/transforms/StridedCopy.h"

#include "RandomGeometry.h"
#include "RandomRegionCopy.h"
#include "SpecialValues.h"
#include "aoa/runtime/transforms/StridedCopyLaunch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <random>

using namespace aoa;
using namespace aoa::runtime;
using ::testing::HasSubstr;

namespace {

using Buffer = test::TensorBuffer;
using test::everyDTypePair;
using test::kFloating;
using test::randomDTypes;

/// Runs the copy with copyRegion and with the strided copy into two copies
/// of `dstInitial` and expects the same bytes everywhere (the storage
/// around the tensor included).
void expectSameAsCopyRegion(const Buffer &src, const Box &srcRegion,
                            const Buffer &dstInitial, const Box &dstRegion,
                            const Permutation &permutation) {
  std::string what =
      test::describeCopy(src, srcRegion, dstInitial, dstRegion, permutation);
  Buffer expected = dstInitial, actual = dstInitial;
  Status status = copyRegion(src.view(), srcRegion, expected.mutableView(),
                             dstRegion, permutation);
  ASSERT_TRUE(status) << what << ": " << status.error().toString();
  Expected<StridedCopy> copy = describeRegionCopy(
      src.view(), srcRegion, actual.mutableView(), dstRegion, permutation);
  ASSERT_TRUE(copy) << what << ": " << copy.error().toString();
  ASSERT_TRUE(checkStridedCopy(*copy)) << what;
  EXPECT_EQ(copy->elementCount(), uint64_t(srcRegion.volume())) << what;
  runStridedCopyOnHost(*copy);
  ASSERT_TRUE(actual.storage == expected.storage) << what;
}

/// One random copy of a region of `srcShape` through a random permutation
/// into a destination at least as large, at random byte offsets.
void randomCopy(std::mt19937_64 &rng, const std::vector<int64_t> &srcShape,
                DType from, DType to) {
  test::RandomRegionCopy copy = test::randomRegionCopy(rng, srcShape);
  Buffer src(from, srcShape, rng() % 3 == 0 ? rng() % 8 : 0);
  src.fillSpecial(rng);
  Buffer dst(to, copy.dstShape, rng() % 3 == 0 ? rng() % 8 : 0);
  expectSameAsCopyRegion(src, copy.srcRegion, dst, copy.dstRegion,
                         copy.permutation);
}

TEST(StridedCopy, RandomCopiesMatchCopyRegion) {
  std::mt19937_64 rng(20260501);
  for (int trial = 0; trial < 3000 && !HasFailure(); ++trial) {
    size_t rank = 1 + rng() % 5;
    std::vector<int64_t> shape;
    for (size_t i = 0; i < rank; ++i)
      shape.push_back(1 + int64_t(rng() % (rng() % 4 == 0 ? 40 : 6)));
    auto [from, to] = randomDTypes(rng);
    randomCopy(rng, shape, from, to);
  }
}

TEST(StridedCopy, EveryDTypePairAndHardValues) {
  // Every supported pair, on a transposing, a gathering and a contiguous
  // copy, with thousands of hard-case elements each.
  std::mt19937_64 rng(7);
  std::vector<std::pair<DType, DType>> pairs = everyDTypePair();
  for (auto [from, to] : pairs) {
    for (const std::vector<int64_t> &shape :
         {std::vector<int64_t>{70, 45}, std::vector<int64_t>{3, 5, 7, 11},
          std::vector<int64_t>{4096}}) {
      for (int repeat = 0; repeat < 3; ++repeat)
        randomCopy(rng, shape, from, to);
      if (HasFailure())
        return;
    }
  }
}

TEST(StridedCopy, TransposesWithPartialTilesAndBatches) {
  std::mt19937_64 rng(5);
  struct Case {
    std::vector<int64_t> shape;
    std::vector<int64_t> axes;
  };
  for (const Case &c :
       {Case{{100, 77}, {1, 0}}, Case{{33, 65}, {1, 0}}, Case{{16, 16}, {1, 0}},
        Case{{17, 300}, {1, 0}}, Case{{3, 70, 45}, {0, 2, 1}},
        Case{{70, 3, 45}, {2, 1, 0}}, Case{{40, 3, 50}, {2, 1, 0}},
        Case{{2, 3, 37, 41}, {1, 0, 3, 2}}, Case{{2, 40, 3, 33}, {3, 2, 0, 1}},
        Case{{5, 2, 3, 20, 18}, {4, 1, 0, 2, 3}}}) {
    std::optional<Permutation> p =
        Permutation::fromAxes(c.axes, c.shape.size());
    ASSERT_TRUE(p);
    for (auto [from, to] :
         {std::pair{DType::BF16, DType::BF16},
          std::pair{DType::F32, DType::F32}, std::pair{DType::U8, DType::U8},
          std::pair{DType::I64, DType::I64}, std::pair{DType::BF16, DType::F32},
          std::pair{DType::F32, DType::F16}, std::pair{DType::F64, DType::BF16},
          std::pair{DType::F16, DType::F64}}) {
      for (size_t offset : {0, 1}) {
        Buffer src(from, c.shape, offset);
        src.fillSpecial(rng);
        Buffer dst(to, p->apply(c.shape), offset * 3);
        Box whole = Box::fromShape(c.shape);
        expectSameAsCopyRegion(src, whole, dst, Box::fromShape(dst.shape), *p);
        // A sub-box into the middle of a larger destination.
        std::vector<int64_t> begin, size;
        for (int64_t extent : c.shape) {
          begin.push_back(extent > 4 ? 1 : 0);
          size.push_back(extent > 4 ? extent - 3 : extent);
        }
        Box part(begin, size);
        std::vector<int64_t> bigger = p->apply(c.shape);
        for (int64_t &extent : bigger)
          extent += 2;
        Buffer wide(to, bigger, offset);
        std::vector<int64_t> at(c.shape.size(), 1);
        expectSameAsCopyRegion(src, part, wide, Box(at, p->apply(size)), *p);
        if (HasFailure())
          return;
      }
    }
  }
}

TEST(StridedCopy, TransposesMoveInPairsWhereEvenAndAligned) {
  // Even extents and strides, aligned tensors: rows and columns move two at
  // a time (partial tiles and batches too); anything odd falls back to
  // single elements. Either way the bytes are copyRegion's.
  std::mt19937_64 rng(17);
  struct Case {
    std::vector<int64_t> shape;
    std::vector<int64_t> axes;
    size_t offset;
    bool inPairs;
  };
  for (const Case &c :
       {Case{{100, 78}, {1, 0}, 0, true}, Case{{64, 64}, {1, 0}, 0, true},
        Case{{130, 66}, {1, 0}, 0, true}, Case{{4, 70, 46}, {0, 2, 1}, 0, true},
        Case{{2, 40, 4, 34}, {3, 2, 0, 1}, 0, true},
        Case{{100, 77}, {1, 0}, 0, false}, Case{{99, 78}, {1, 0}, 0, false},
        Case{{4, 70, 45}, {0, 2, 1}, 0, false},
        Case{{100, 78}, {1, 0}, 1, false}}) {
    std::optional<Permutation> p =
        Permutation::fromAxes(c.axes, c.shape.size());
    ASSERT_TRUE(p);
    for (auto [from, to] :
         {std::pair{DType::BF16, DType::BF16},
          std::pair{DType::F32, DType::F32}, std::pair{DType::U8, DType::U8},
          std::pair{DType::F64, DType::F64}, std::pair{DType::BF16, DType::F32},
          std::pair{DType::F32, DType::BF16},
          std::pair{DType::F64, DType::F16}}) {
      Buffer src(from, c.shape, c.offset * dtypeSize(from));
      src.fillSpecial(rng);
      Buffer dst(to, p->apply(c.shape));
      Box whole = Box::fromShape(c.shape);
      Box dstWhole = Box::fromShape(dst.shape);
      Expected<StridedCopy> copy = describeRegionCopy(
          src.view(), whole, dst.mutableView(), dstWhole, *p);
      ASSERT_TRUE(copy);
      Expected<StridedCopyLaunch> launch = planStridedCopyLaunch(*copy);
      ASSERT_TRUE(launch);
      std::string what = test::describeCopy(src, whole, dst, dstWhole, *p);
      EXPECT_EQ(launch->path, StridedCopyPath::Transpose) << what;
      EXPECT_EQ(launch->transposeInPairs, c.inPairs) << what;
      expectSameAsCopyRegion(src, whole, dst, dstWhole, *p);
      if (HasFailure())
        return;
    }
  }
}

TEST(StridedCopy, ContiguousRunsAndLargeExtents) {
  // Rows of every width and alignment (moved as 1- to 16-byte words), long
  // runs, and gathers whose extents need large divisors.
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300 && !HasFailure(); ++trial) {
    std::vector<int64_t> shape;
    switch (trial % 3) {
    case 0:
      shape = {1 + int64_t(rng() % 9), 1 + int64_t(rng() % 64)};
      break;
    case 1:
      shape = {1 + int64_t(rng() % 3), 1000 + int64_t(rng() % 9000)};
      break;
    default:
      shape = {2 + int64_t(rng() % 3), 2 + int64_t(rng() % 3),
               3000 + int64_t(rng() % 70000)};
      break;
    }
    auto [from, to] = randomDTypes(rng);
    randomCopy(rng, shape, from, to);
  }
}

TEST(StridedCopy, AlignedContiguousCastsMoveInLanes) {
  // A cast whose innermost run is contiguous on both sides moves as vectors
  // of 16 bytes on its narrower side (how the GPU reaches a memcpy's
  // bandwidth), only where every vector is aligned; either way the bytes
  // are copyRegion's.
  std::mt19937_64 rng(13);
  for (DType from : kFloating)
    for (DType to : kFloating) {
      if (from == to)
        continue;
      struct Case {
        std::vector<int64_t> shape;
        size_t srcOffset;
        bool inLanes;
      };
      size_t lanes = 16 / std::min(dtypeSize(from), dtypeSize(to));
      for (const Case &c :
           {Case{{3, 64}, 0, true}, Case{{5, 16}, 0, true},
            Case{{3, 63}, 0, false}, Case{{3, 64}, dtypeSize(from), false},
            Case{{3, 64}, 1, false}}) {
        Buffer src(from, c.shape, c.srcOffset);
        src.fillSpecial(rng);
        Buffer dst(to, c.shape);
        Box whole = Box::fromShape(c.shape);
        Expected<StridedCopy> copy =
            describeRegionCopy(src.view(), whole, dst.mutableView(), whole,
                               Permutation::identity(2));
        ASSERT_TRUE(copy);
        Expected<StridedCopyLaunch> launch = planStridedCopyLaunch(*copy);
        ASSERT_TRUE(launch);
        std::string what =
            test::describeCopy(src, whole, dst, whole, Permutation::identity(2));
        EXPECT_EQ(launch->castInLanes, c.inLanes) << what;
        if (c.inLanes) {
          EXPECT_EQ(launch->elementwise32.count, src.elements() / lanes)
              << what;
        }
        expectSameAsCopyRegion(src, whole, dst, whole,
                               Permutation::identity(2));
        // The last 2 * lanes columns of every row (where there are that
        // many: 16-lane FP8 casts have 32): strided rows, contiguous runs of
        // whole vectors.
        int64_t width = std::min(c.shape[1], int64_t(2 * lanes));
        Box columns({0, c.shape[1] - width}, {c.shape[0], width});
        Buffer narrow(to, {c.shape[0], width});
        expectSameAsCopyRegion(src, columns, narrow,
                               Box::fromShape(narrow.shape),
                               Permutation::identity(2));
        if (HasFailure())
          return;
      }
    }
}

TEST(StridedCopy, DescriptorsMergeDimensions) {
  Buffer src(DType::F32, {4, 5, 6});
  Buffer dst(DType::BF16, {4, 5, 6});
  auto describeCopy = [&](const Box &srcRegion, const Box &dstRegion,
                          const Permutation &p, Buffer &target) {
    Expected<StridedCopy> copy = describeRegionCopy(
        src.view(), srcRegion, target.mutableView(), dstRegion, p);
    EXPECT_TRUE(copy) << copy.error().toString();
    return copy ? *copy : StridedCopy();
  };
  Permutation identity = Permutation::identity(3);

  // The whole tensor: one contiguous run.
  Box whole = Box::fromShape({4, 5, 6});
  StridedCopy copy = describeCopy(whole, whole, identity, dst);
  EXPECT_EQ(copy.rank, 1);
  EXPECT_EQ(copy.extents[0], 120);
  EXPECT_EQ(copy.sourceStrides[0], 1);
  EXPECT_EQ(copy.destinationStrides[0], 1);
  EXPECT_EQ(copy.from, DType::F32);
  EXPECT_EQ(copy.to, DType::BF16);
  EXPECT_EQ(copy.source, src.data());
  EXPECT_EQ(copy.destination, dst.data());

  // Rows 1-2 of every matrix: the rows merge, the matrices do not.
  Box rows({0, 1, 0}, {4, 2, 6});
  copy = describeCopy(rows, rows, identity, dst);
  EXPECT_EQ(copy.rank, 2);
  EXPECT_EQ(copy.extents[0], 4);
  EXPECT_EQ(copy.extents[1], 12);
  EXPECT_EQ(copy.sourceStrides[0], 30);
  EXPECT_EQ(copy.sourceStrides[1], 1);
  EXPECT_EQ(copy.destinationStrides[0], 30);
  EXPECT_EQ(copy.destinationStrides[1], 1);
  EXPECT_EQ(copy.source, src.data() + 6 * 4);
  EXPECT_EQ(copy.destination, dst.data() + 6 * 2);

  // Extent-1 dimensions are dropped: one matrix row of 6.
  Box oneRow({2, 3, 0}, {1, 1, 6});
  Buffer rowTarget(DType::F32, {1, 1, 6});
  copy = describeCopy(oneRow, Box::fromShape({1, 1, 6}), identity, rowTarget);
  EXPECT_EQ(copy.rank, 1);
  EXPECT_EQ(copy.extents[0], 6);
  EXPECT_EQ(copy.source, src.data() + (2 * 30 + 3 * 6) * 4);
  EXPECT_EQ(copy.destination, rowTarget.data());

  // A transpose of the last two axes keeps them apart; the outer axis
  // merges with nothing.
  Buffer transposed(DType::F32, {4, 6, 5});
  copy = describeCopy(whole, Box::fromShape({4, 6, 5}),
                      *Permutation::fromAxes({0, 2, 1}, 3), transposed);
  EXPECT_EQ(copy.rank, 3);
  EXPECT_EQ(copy.extents[1], 6);
  EXPECT_EQ(copy.extents[2], 5);
  EXPECT_EQ(copy.sourceStrides[1], 1);
  EXPECT_EQ(copy.sourceStrides[2], 6);
  EXPECT_EQ(copy.destinationStrides[1], 5);
  EXPECT_EQ(copy.destinationStrides[2], 1);

  // A scalar and an empty region.
  Buffer scalar(DType::F64, {});
  Buffer scalarTarget(DType::F16, {});
  Expected<StridedCopy> one =
      describeRegionCopy(scalar.view(), Box(), scalarTarget.mutableView(),
                         Box(), Permutation::identity(0));
  ASSERT_TRUE(one);
  EXPECT_EQ(one->rank, 1);
  EXPECT_EQ(one->elementCount(), 1u);
  Buffer target = dst;
  Expected<StridedCopy> none = describeRegionCopy(
      src.view(), Box({0, 0, 0}, {4, 0, 6}), target.mutableView(),
      Box({0, 0, 0}, {4, 0, 6}), identity);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->elementCount(), 0u);
  runStridedCopyOnHost(*none);
  EXPECT_TRUE(target.storage == dst.storage);
}

TEST(StridedCopy, NineDimensionsMergeOrFail) {
  // Nine axes of extent 2: copied whole they merge into one run; reversed,
  // no two neighbours are contiguous in both and nine dimensions remain.
  std::vector<int64_t> shape(9, 2);
  Buffer src(DType::F16, shape);
  std::mt19937_64 rng(3);
  src.fillSpecial(rng);
  Buffer dst(DType::F16, shape);
  Box whole = Box::fromShape(shape);
  Expected<StridedCopy> merged = describeRegionCopy(
      src.view(), whole, dst.mutableView(), whole, Permutation::identity(9));
  ASSERT_TRUE(merged) << merged.error().toString();
  EXPECT_EQ(merged->rank, 1);
  EXPECT_EQ(merged->extents[0], 512);
  expectSameAsCopyRegion(src, whole, dst, whole, Permutation::identity(9));

  Expected<StridedCopy> reversed = describeRegionCopy(
      src.view(), whole, dst.mutableView(), whole, Permutation::reversed(9));
  ASSERT_FALSE(reversed);
  EXPECT_THAT(reversed.error().message,
              HasSubstr("has 9 dimensions after merging contiguous ones, "
                        "more than the 8 a strided copy handles"));
  // Eight remaining dimensions are fine.
  std::vector<int64_t> axes{0, 8, 7, 6, 5, 4, 3, 2, 1};
  std::optional<Permutation> eight = Permutation::fromAxes(axes, 9);
  ASSERT_TRUE(eight);
  std::vector<int64_t> outer{1, 2, 2, 2, 2, 2, 2, 2, 2};
  Buffer wide(DType::F16, outer);
  Box firstHalf(std::vector<int64_t>(9, 0), outer);
  Expected<StridedCopy> ok = describeRegionCopy(
      src.view(), firstHalf, wide.mutableView(), firstHalf, *eight);
  ASSERT_TRUE(ok) << ok.error().toString();
  EXPECT_EQ(ok->rank, 8);
  expectSameAsCopyRegion(src, firstHalf, wide, firstHalf, *eight);
}

TEST(StridedCopy, ErrorsAreCopyRegionErrors) {
  Buffer src(DType::F32, {4, 2});
  Buffer dst(DType::F32, {2, 4});
  Buffer ints(DType::I32, {2, 4});
  Permutation transpose = Permutation::reversed(2);
  struct Case {
    TensorView src;
    Box srcRegion;
    MutableTensorView dst;
    Box dstRegion;
    Permutation permutation;
  };
  TensorView shortView(src.data(), 16, DType::F32, {4, 2});
  std::vector<Case> cases{
      // Regions outside their tensors.
      {src.view(), Box({0, 1}, {4, 2}), dst.mutableView(), Box({0, 0}, {2, 4}),
       transpose},
      {src.view(), Box({0, 0}, {4, 2}), dst.mutableView(), Box({0, 1}, {2, 4}),
       transpose},
      // Shapes that do not match through the permutation.
      {src.view(), Box({0, 0}, {4, 2}), dst.mutableView(), Box({0, 0}, {2, 4}),
       Permutation::identity(2)},
      // A buffer too small for its shape.
      {shortView, Box({0, 0}, {1, 1}), dst.mutableView(), Box({0, 0}, {1, 1}),
       Permutation::identity(2)},
      // Ranks that differ.
      {src.view(), Box({0, 0}, {4, 2}), dst.mutableView(), Box({0, 0}, {2, 4}),
       Permutation::identity(3)},
  };
  for (const Case &c : cases) {
    Status expected =
        copyRegion(c.src, c.srcRegion, c.dst, c.dstRegion, c.permutation);
    ASSERT_FALSE(expected);
    Expected<StridedCopy> copy = describeRegionCopy(c.src, c.srcRegion, c.dst,
                                                    c.dstRegion, c.permutation);
    ASSERT_FALSE(copy);
    EXPECT_EQ(copy.error().toString(), expected.error().toString());
  }
  // Every dtype pair casts; int32 is a checked target.
  Expected<StridedCopy> cast =
      describeRegionCopy(src.view(), Box({0, 0}, {4, 2}), ints.mutableView(),
                         Box({0, 0}, {2, 4}), transpose);
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast->to, DType::I32);
  // Nothing was written.
  EXPECT_TRUE(dst.storage == Buffer(DType::F32, {2, 4}).storage);
}

TEST(StridedCopy, HandBuiltCopies) {
  // The StridedCopy semantics directly, against an odometer over the
  // extents: negative and zero (broadcasting) strides, extent-1 and
  // mergeable dimensions, rank 0.
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 500 && !HasFailure(); ++trial) {
    auto [from, to] = randomDTypes(rng);
    StridedCopy copy;
    copy.from = from;
    copy.to = to;
    copy.rank = int(rng() % 5);
    // Destination: dense row-major over a random order of the axes.
    int64_t count = 1;
    for (int i = 0; i < copy.rank; ++i) {
      copy.extents[i] = 1 + int64_t(rng() % (rng() % 3 == 0 ? 20 : 4));
      count *= copy.extents[i];
    }
    int64_t stride = 1;
    for (int i = copy.rank - 1; i >= 0; --i) {
      copy.destinationStrides[i] = stride;
      stride *= copy.extents[i];
    }
    // Source: each axis contiguous, reversed, broadcast or strided.
    int64_t sourceSpan = 1, sourceStart = 0;
    for (int i = copy.rank - 1; i >= 0; --i) {
      switch (rng() % 4) {
      case 0:
        copy.sourceStrides[i] = 0;
        break;
      case 1:
        copy.sourceStrides[i] = -sourceSpan;
        sourceStart += sourceSpan * (copy.extents[i] - 1);
        break;
      default:
        copy.sourceStrides[i] = sourceSpan * (1 + int64_t(rng() % 2));
        break;
      }
      sourceSpan += std::abs(copy.sourceStrides[i]) * (copy.extents[i] - 1);
    }
    Buffer src(from, {sourceSpan}, rng() % 4);
    src.fillSpecial(rng);
    Buffer expected(to, {count}, rng() % 4);
    Buffer actual = expected;
    copy.source = src.data() + sourceStart * int64_t(dtypeSize(from));
    copy.destination = actual.data();
    ASSERT_TRUE(checkStridedCopy(copy));
    ASSERT_EQ(copy.elementCount(), uint64_t(count));
    runStridedCopyOnHost(copy);

    std::vector<int64_t> index(size_t(copy.rank), 0);
    for (int64_t n = 0; n < count; ++n) {
      int64_t s = sourceStart, d = 0;
      for (int i = 0; i < copy.rank; ++i) {
        s += index[size_t(i)] * copy.sourceStrides[i];
        d += index[size_t(i)] * copy.destinationStrides[i];
      }
      TensorView one(src.data() + s * int64_t(dtypeSize(from)), dtypeSize(from),
                     from, {1});
      MutableTensorView out(expected.data() + d * int64_t(dtypeSize(to)),
                            dtypeSize(to), to, {1});
      ASSERT_TRUE(copyRegion(one, Box({0}, {1}), out, Box({0}, {1})));
      for (int i = copy.rank - 1; i >= 0; --i) {
        if (++index[size_t(i)] < copy.extents[i])
          break;
        index[size_t(i)] = 0;
      }
    }
    ASSERT_TRUE(actual.storage == expected.storage) << "trial " << trial;
  }
}

TEST(StridedCopy, DeviceNaNConversionsAreTheHostOnes) {
  // On the GPU, floatToDouble and doubleToFloat build NaNs from their bits
  // (the hardware may return one canonical NaN); the bits must be what the
  // host's conversions give. Every float NaN, and a million double NaNs.
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t payload = 1; payload < 0x800000u; ++payload) {
      uint32_t bits = sign | 0x7F800000u | payload;
      double host = static_cast<double>(floatFromBits(bits));
      ASSERT_EQ(doubleBits(doubleFromFloatNaN(bits)), doubleBits(host))
          << std::hex << bits;
    }
  }
  std::mt19937_64 rng(19);
  for (int i = 0; i < 1000000; ++i) {
    uint64_t payload = 1 + rng() % ((uint64_t(1) << 52) - 1);
    payload >>= rng() % 52; // payloads in the low bits only, too
    uint64_t bits = (rng() & (uint64_t(1) << 63)) | uint64_t(0x7FF) << 52 |
                    (payload ? payload : 1);
    float host = static_cast<float>(doubleFromBits(bits));
    ASSERT_EQ(floatBits(floatFromDoubleNaN(bits)), floatBits(host))
        << std::hex << bits;
  }
}

TEST(StridedCopy, InvalidCopiesAreReported) {
  StridedCopy copy;
  copy.rank = 9;
  EXPECT_THAT(checkStridedCopy(copy).error().message,
              HasSubstr("rank 9 is outside 0..8"));
  copy.rank = 2;
  copy.extents[0] = 3;
  copy.extents[1] = -1;
  EXPECT_THAT(checkStridedCopy(copy).error().message,
              HasSubstr("extent -1 of dimension 1 is negative"));
  // An invalid copy copies nothing.
  std::vector<float> out(6, 1.0f);
  std::vector<int32_t> in(6, 7);
  copy.from = DType::I32;
  copy.to = DType::F32;
  copy.source = in.data();
  copy.destination = out.data();
  runStridedCopyOnHost(copy);
  EXPECT_EQ(out, std::vector<float>(6, 1.0f));
}

} // namespace
