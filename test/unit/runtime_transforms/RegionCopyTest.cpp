//===- RegionCopyTest.cpp - Strided box copies against a brute-force model ===//
//
// Random tensors of rank 0-4, random boxes, permutations and dtype pairs are
// copied by the library and by an element-by-element model (an odometer
// over the source box that computes each destination index from the
// permutation's definition); the destination buffers must agree byte for
// byte, including the bytes outside the destination region, which must be
// left alone. Shapes are chosen so that every path is taken: contiguous
// runs, tiled transposes (with partial tiles), and strided gathers.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/RegionCopy.h"

#include "BruteForce.h"
#include "RandomGeometry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace aoa;
using namespace aoa::runtime;
using aoa::test::forEachPoint;
using aoa::test::Point;
using ::testing::HasSubstr;

namespace {

/// A tensor's bytes together with its view.
struct Buffer {
  std::vector<unsigned char> bytes;
  DType dtype;
  std::vector<int64_t> shape;

  Buffer(DType dtype, std::vector<int64_t> shape, unsigned char fill)
      : dtype(dtype), shape(std::move(shape)) {
    int64_t volume = 1;
    for (int64_t extent : this->shape)
      volume *= extent;
    bytes.assign(size_t(volume) * dtypeSize(dtype), fill);
  }
  TensorView view() const {
    return TensorView(bytes.data(), bytes.size(), dtype, shape);
  }
  MutableTensorView mutableView() {
    return MutableTensorView(bytes.data(), bytes.size(), dtype, shape);
  }
  /// The byte offset of a point (row-major), computed independently.
  size_t byteOffset(const Point &point) const {
    int64_t index = 0;
    for (size_t i = 0; i < shape.size(); ++i)
      index = index * shape[i] + point[i];
    return size_t(index) * dtypeSize(dtype);
  }
};

/// The model: for every source point l of `srcRegion`, the destination point
/// is dstRegion.begin + m with m[i] = (l - srcRegion.begin)[P[i]]; the value
/// is one element cast on its own.
void modelCopy(const Buffer &src, const Box &srcRegion, Buffer &dst,
               const Box &dstRegion, llvm::ArrayRef<unsigned> permutation) {
  forEachPoint(srcRegion, [&](const Point &l) {
    Point m(l.size());
    for (size_t i = 0; i < l.size(); ++i)
      m[i] = dstRegion.dim(i).begin +
             (l[permutation[i]] - srcRegion.dim(permutation[i]).begin);
    Status cast =
        castElements(src.dtype, src.bytes.data() + src.byteOffset(l), dst.dtype,
                     dst.bytes.data() + dst.byteOffset(m), 1);
    ASSERT_TRUE(cast);
  });
}

/// Random element bytes that are numbers for floating dtypes (so NaN
/// payload quieting cannot make two correct copies differ), anything
/// otherwise.
void fillRandom(Buffer &buffer, std::mt19937_64 &rng) {
  size_t size = dtypeSize(buffer.dtype);
  for (size_t at = 0; at < buffer.bytes.size(); at += size) {
    double value = std::ldexp(double(int64_t(rng() % 2001) - 1000), -4);
    unsigned char *to = buffer.bytes.data() + at;
    if (isFloatingDType(buffer.dtype)) {
      ASSERT_TRUE(castElements(DType::F64, &value, buffer.dtype, to, 1));
    } else {
      for (size_t b = 0; b < size; ++b)
        to[b] = static_cast<unsigned char>(rng());
    }
  }
}


/// A random interval of extent `size` inside [0, extent).
Interval placeInside(std::mt19937_64 &rng, int64_t size, int64_t extent) {
  int64_t begin = int64_t(rng() % uint64_t(extent - size + 1));
  return {begin, begin + size};
}

/// Copies with the library and the model into two copies of the same
/// destination, and compares them.
void expectCopyMatchesModel(const Buffer &src, const Box &srcRegion,
                            const Buffer &dstInitial, const Box &dstRegion,
                            const Permutation &permutation,
                            const std::string &what) {
  Buffer actual = dstInitial, expected = dstInitial;
  Status status = copyRegion(src.view(), srcRegion, actual.mutableView(),
                             dstRegion, permutation);
  ASSERT_TRUE(status) << what << ": " << status.error().toString();
  modelCopy(src, srcRegion, expected, dstRegion, permutation.axes());
  ASSERT_TRUE(actual.bytes == expected.bytes) << what;
}

std::string describe(const Buffer &src, const Box &srcRegion, const Buffer &dst,
                     const Box &dstRegion, const Permutation &permutation) {
  return std::string(dtypeName(src.dtype)) + " " + srcRegion.toString() +
         " -> " + std::string(dtypeName(dst.dtype)) + " " +
         dstRegion.toString() + " through " + permutation.toString();
}

TEST(RegionCopy, RandomCopiesMatchTheModel) {
  std::mt19937_64 rng(20261121);
  const DType floating[] = {DType::F64, DType::F32, DType::F16, DType::BF16};
  for (int trial = 0; trial < 3000; ++trial) {
    size_t rank = rng() % 5;
    // Source shape and a box inside it; extents up to 6, some up to 40 so
    // that transposes cross tile boundaries.
    std::vector<int64_t> srcShape;
    for (size_t i = 0; i < rank; ++i)
      srcShape.push_back(1 + int64_t(rng() % (rng() % 4 == 0 ? 40 : 6)));
    llvm::SmallVector<Interval, 4> srcDims;
    for (size_t i = 0; i < rank; ++i) {
      int64_t size = int64_t(rng() % uint64_t(srcShape[i] + 1));
      if (rng() % 3 != 0) // mostly the whole extent: long contiguous runs
        size = srcShape[i];
      srcDims.push_back(placeInside(rng, size, srcShape[i]));
    }
    Box srcRegion(srcDims);
    Permutation permutation = rng() % 3 == 0 ? Permutation::identity(rank)
                                             : test::randomPermutation(rng, rank);
    // Destination: the permuted box placed inside a shape at least as big.
    std::vector<int64_t> boxShape = permutation.apply(srcRegion.shape());
    std::vector<int64_t> dstShape;
    llvm::SmallVector<Interval, 4> dstDims;
    for (size_t i = 0; i < rank; ++i) {
      dstShape.push_back(boxShape[i] + int64_t(rng() % 3 == 0 ? rng() % 4 : 0));
      if (dstShape.back() == 0)
        dstShape.back() = 1;
      dstDims.push_back(placeInside(rng, boxShape[i], dstShape.back()));
    }
    Box dstRegion(dstDims);

    DType srcType, dstType;
    if (rng() % 2) {
      srcType = floating[rng() % 4];
      dstType = floating[rng() % 4];
    } else {
      srcType = dstType = kAllDTypes[rng() % std::size(kAllDTypes)];
    }
    Buffer src(srcType, srcShape, 0);
    fillRandom(src, rng);
    Buffer dst(dstType, dstShape, 0xA5);
    std::string what = "trial " + std::to_string(trial) + ": " +
                       describe(src, srcRegion, dst, dstRegion, permutation);
    expectCopyMatchesModel(src, srcRegion, dst, dstRegion, permutation, what);
    if (::testing::Test::HasFailure())
      return;
  }
}

TEST(RegionCopy, LargeTransposesWithPartialTiles) {
  std::mt19937_64 rng(5);
  struct Case {
    std::vector<int64_t> shape;
    std::vector<int64_t> axes;
  };
  for (const Case &c :
       {Case{{100, 77}, {1, 0}}, Case{{33, 65}, {1, 0}},
        Case{{3, 70, 45}, {0, 2, 1}}, Case{{40, 3, 50}, {2, 1, 0}},
        Case{{2, 3, 37, 41}, {1, 0, 3, 2}}}) {
    std::optional<Permutation> p =
        Permutation::fromAxes(c.axes, c.shape.size());
    ASSERT_TRUE(p);
    for (DType from : {DType::F32, DType::BF16}) {
      for (DType to : {DType::F32, DType::F16, DType::F64}) {
        Buffer src(from, c.shape, 0);
        fillRandom(src, rng);
        Buffer dst(to, p->apply(c.shape), 0x5A);
        Box whole = Box::fromShape(c.shape);
        expectCopyMatchesModel(
            src, whole, dst, Box::fromShape(dst.shape), *p,
            describe(src, whole, dst, Box::fromShape(dst.shape), *p));
      }
    }
  }
}

TEST(RegionCopy, LargePacksAndUnpacksWithACastMatchTheModel) {
  // Row runs of a region copy whose destination is 8 MiB or more, each of
  // 4 KiB or more, are cast with streaming stores: a column box packed into
  // a dense tensor and a dense tensor unpacked into a column box, with
  // casts streamed from registers (bfloat16 -> float32, float16 ->
  // bfloat16) and through a buffer (float32 -> bfloat16); the runs start
  // off a 16-byte boundary.
  std::mt19937_64 rng(16);
  const std::vector<int64_t> shape = {2200, 4100};
  const Box columns({0, 3}, {2200, 2100}); // begins, extents
  const std::vector<int64_t> packed = {2200, 2100};
  for (auto [from, to] :
       {std::pair(DType::BF16, DType::F32), std::pair(DType::F16, DType::BF16),
        std::pair(DType::F32, DType::BF16)}) {
    Buffer whole(from, shape, 0);
    fillRandom(whole, rng);
    Buffer dense(to, packed, 0x5A);
    expectCopyMatchesModel(
        whole, columns, dense, Box::fromShape(packed), Permutation::identity(2),
        describe(whole, columns, dense, Box::fromShape(packed),
                 Permutation::identity(2)));
    Buffer denseSource(from, packed, 0);
    fillRandom(denseSource, rng);
    Buffer wide(to, shape, 0x5A);
    expectCopyMatchesModel(denseSource, Box::fromShape(packed), wide, columns,
                           Permutation::identity(2),
                           describe(denseSource, Box::fromShape(packed), wide,
                                    columns, Permutation::identity(2)));
  }
  // A checked cast: the first failing element of a streamed run is found,
  // and written as 0.
  std::vector<float> values(size_t(shape[0] * shape[1]), 7.5f);
  values[size_t(1500 * shape[1] + 1000)] = std::nanf("");
  values[size_t(1800 * shape[1] + 10)] = 3e9f;
  std::vector<int32_t> out(size_t(packed[0] * packed[1]), -1);
  TensorView srcView(values.data(), values.size() * 4, DType::F32, shape);
  MutableTensorView dstView(out.data(), out.size() * 4, DType::I32, packed);
  uint64_t failure = 0;
  EXPECT_FALSE(copyRegion(srcView, columns, dstView, Box::fromShape(packed),
                          Permutation::identity(2), &failure));
  size_t failing = size_t(1500 * packed[1] + 1000 - 3);
  EXPECT_EQ(failure, uint64_t(failing));
  EXPECT_EQ(out[failing], 0);
  EXPECT_EQ(out[failing - 1], 7);
  EXPECT_EQ(out[failing + 1], 7);
  EXPECT_EQ(out.back(), 7);
}

TEST(RegionCopy, SubBoxesIntoLargerDestinations) {
  // A hand-checked case: rows 1-2, columns 1-3 of a 3x4 int32 matrix,
  // transposed into the middle of a 5x4 destination.
  Buffer src(DType::I32, {3, 4}, 0);
  for (int i = 0; i < 12; ++i)
    std::memcpy(src.bytes.data() + 4 * i, &i, 4);
  Buffer dst(DType::I32, {5, 4}, 0);
  std::vector<int32_t> minusOne(20, -1);
  std::memcpy(dst.bytes.data(), minusOne.data(), 80);
  Status status = copyRegion(src.view(), Box({1, 1}, {2, 3}), dst.mutableView(),
                             Box({1, 1}, {3, 2}), Permutation::reversed(2));
  ASSERT_TRUE(status) << status.error().toString();
  std::vector<int32_t> out(20);
  std::memcpy(out.data(), dst.bytes.data(), 80);
  EXPECT_EQ(out, (std::vector<int32_t>{-1, -1, -1, -1, //
                                       -1, 5,  9,  -1, //
                                       -1, 6,  10, -1, //
                                       -1, 7,  11, -1, //
                                       -1, -1, -1, -1}));
}

TEST(RegionCopy, ScalarsAndEmptyRegions) {
  Buffer src(DType::F64, {}, 0);
  double pi = 3.25;
  std::memcpy(src.bytes.data(), &pi, 8);
  Buffer dst(DType::F32, {}, 0);
  ASSERT_TRUE(copyRegion(src.view(), Box(), dst.mutableView(), Box()));
  float out;
  std::memcpy(&out, dst.bytes.data(), 4);
  EXPECT_EQ(out, 3.25f);

  // An empty region copies nothing, and works with empty tensors.
  Buffer none(DType::U8, {0, 3}, 0);
  Buffer target(DType::U8, {2, 3}, 7);
  ASSERT_TRUE(copyRegion(none.view(), Box({0, 0}, {0, 3}), target.mutableView(),
                         Box({1, 0}, {0, 3})));
  EXPECT_EQ(target.bytes, std::vector<unsigned char>(6, 7));
}

TEST(RegionCopy, InvalidArguments) {
  Buffer src(DType::F32, {4, 2}, 0);
  Buffer dst(DType::F32, {2, 4}, 0);
  auto error = [&](const TensorView &s, const Box &sr,
                   const MutableTensorView &d, const Box &dr,
                   const Permutation &p) {
    Status status = copyRegion(s, sr, d, dr, p);
    EXPECT_FALSE(status);
    return status ? std::string() : status.error().toString();
  };
  Permutation transpose = Permutation::reversed(2);
  Permutation identity = Permutation::identity(2);
  EXPECT_EQ(error(src.view(), Box({0, 1}, {4, 2}), dst.mutableView(),
                  Box({0, 0}, {2, 4}), transpose),
            "region copy: source region [0:4, 1:3] is outside the source "
            "tensor of shape [4, 2]\nhint: the copy does not fit its buffers; "
            "the plan is inconsistent, recompile it");
  EXPECT_THAT(error(src.view(), Box({0, 0}, {4, 2}), dst.mutableView(),
                    Box({0, 1}, {2, 4}), transpose),
              HasSubstr("destination region [0:2, 1:5] is outside the "
                        "destination tensor of shape [2, 4]"));
  EXPECT_EQ(error(src.view(), Box({0, 0}, {4, 2}), dst.mutableView(),
                  Box({0, 0}, {2, 4}), identity),
            "region copy: destination region [0:2, 0:4] has shape [2, 4], "
            "but source region [0:4, 0:2] permuted by [0, 1] has shape "
            "[4, 2]\nhint: the copy does not fit its buffers; the plan is "
            "inconsistent, recompile it");
  EXPECT_THAT(error(src.view(), Box({0}, {4}), dst.mutableView(),
                    Box({0, 0}, {2, 4}), transpose),
              HasSubstr("source region [0:4] has rank 1, but the source "
                        "tensor's shape [4, 2] has rank 2"));
  EXPECT_THAT(error(src.view(), Box({0, 0}, {4, 2}), dst.mutableView(),
                    Box({0, 0}, {2, 4}), Permutation::identity(3)),
              HasSubstr("the source region has rank 2, the destination "
                        "region 2 and the permutation 3"));
  TensorView shortView(src.bytes.data(), 16, DType::F32, {4, 2});
  EXPECT_THAT(error(shortView, Box({0, 0}, {1, 1}), dst.mutableView(),
                    Box({0, 0}, {1, 1}), identity),
              HasSubstr("source buffer of 16 bytes cannot hold shape [4, 2] "
                        "of float32 (32 bytes)"));
  TensorView negative(src.bytes.data(), 32, DType::F32, {-4, 2});
  EXPECT_THAT(error(negative, Box({0, 0}, {0, 0}), dst.mutableView(),
                    Box({0, 0}, {0, 0}), identity),
              HasSubstr("source shape [-4, 2] has a negative extent"));
  // The destination inside the source's memory.
  TensorView flat(src.bytes.data(), 32, DType::F32, {8});
  MutableTensorView aliased(src.bytes.data() + 8, 8, DType::F32, {2});
  EXPECT_THAT(error(flat, Box({0}, {2}), aliased, Box({0}, {2}),
                    Permutation::identity(1)),
              HasSubstr("the source and destination buffers overlap"));
  // Nothing was written by any refused copy.
  EXPECT_EQ(dst.bytes, std::vector<unsigned char>(32, 0));
  EXPECT_EQ(src.bytes, std::vector<unsigned char>(32, 0));
}

} // namespace
