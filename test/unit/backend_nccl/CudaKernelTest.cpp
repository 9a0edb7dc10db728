//===- CudaKernelTest.cpp - Strided-copy kernels on a GPU against the CPU -===//
//
// Region copies and casts run on GPU 0 through Device::copy (the CUDA
// kernels of lib/cuda/StridedCopyKernel.cu) must write the very bytes
// copyRegion writes on the CPU, the bytes around the destination region
// included. Random shapes, regions, permutations and every dtype pair, with
// elements from the hard cases of every cast; pointers at odd addresses
// (the kernels' misaligned path exists only on the GPU); every kernel path
// (contiguous, widened words, tiled transposes with partial tiles and
// batches, gathers); and grids too large for one launch dimension, so that
// the grid-stride loops go round. Skipped where there is no GPU.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/RegionCopy.h"
#include "aoa/runtime/transforms/StridedCopy.h"

#include "RandomGeometry.h"
#include "RandomRegionCopy.h"
#include "SpecialValues.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>

using namespace aoa;
using namespace aoa::runtime;

namespace {

using Buffer = test::TensorBuffer;
using test::everyDTypePair;
using test::kFloating;
using test::randomDTypes;

class CudaKernel : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (cudaDeviceCount(&why) == 0)
      GTEST_SKIP() << "no CUDA GPU: " << why;
    Expected<std::unique_ptr<Device>> opened = openCudaDevice(0);
    ASSERT_TRUE(opened) << opened.error().toString();
    device_ = std::move(*opened);
    ASSERT_TRUE(device_->isGpu());
  }

  /// Device memory holding a copy of `buffer`'s whole storage.
  DeviceMemory upload(const Buffer &buffer) {
    Expected<DeviceMemory> memory = device_->allocate(buffer.storage.size());
    EXPECT_TRUE(memory) << memory.error().toString();
    if (!memory)
      return DeviceMemory();
    Status status = device_->upload(0, memory->data(), buffer.storage.data(),
                                    buffer.storage.size());
    EXPECT_TRUE(status) << status.error().toString();
    return std::move(*memory);
  }

  /// Runs the copy with copyRegion on the host and as a kernel on the GPU
  /// (on copies of `dstInitial`) and expects the same bytes everywhere.
  void expectSameAsCopyRegion(const Buffer &src, const Box &srcRegion,
                              const Buffer &dstInitial, const Box &dstRegion,
                              const Permutation &permutation) {
    std::string what =
        test::describeCopy(src, srcRegion, dstInitial, dstRegion, permutation);
    Buffer expected = dstInitial;
    Status status = copyRegion(src.view(), srcRegion, expected.mutableView(),
                               dstRegion, permutation);
    ASSERT_TRUE(status) << what << ": " << status.error().toString();

    DeviceMemory from = upload(src);
    DeviceMemory to = upload(dstInitial);
    ASSERT_TRUE(from && to) << what;
    TensorView fromView(from.data() + src.offset, src.bytes(), src.dtype,
                        src.shape);
    MutableTensorView toView(to.data() + dstInitial.offset, dstInitial.bytes(),
                             dstInitial.dtype, dstInitial.shape);
    Expected<StridedCopy> copy =
        describeRegionCopy(fromView, srcRegion, toView, dstRegion, permutation);
    ASSERT_TRUE(copy) << what << ": " << copy.error().toString();
    status = device_->copy(0, *copy);
    ASSERT_TRUE(status) << what << ": " << status.error().toString();
    std::vector<unsigned char> actual(dstInitial.storage.size());
    status = device_->download(0, actual.data(), to.data(), actual.size());
    ASSERT_TRUE(status) << what << ": " << status.error().toString();
    status = device_->synchronize(0);
    ASSERT_TRUE(status) << what << ": " << status.error().toString();
    if (actual != expected.storage) {
      size_t first = 0;
      while (actual[first] == expected.storage[first])
        ++first;
      FAIL() << what << ": first difference at storage byte " << first
             << " (tensor byte " << int64_t(first) - int64_t(expected.offset)
             << "): GPU " << int(actual[first]) << ", CPU "
             << int(expected.storage[first]);
    }
  }

  /// A random region of `srcShape`, a random permutation and a destination
  /// at least as large, at random byte offsets.
  void randomCopy(std::mt19937_64 &rng, const std::vector<int64_t> &srcShape,
                  DType from, DType to) {
    test::RandomRegionCopy copy = test::randomRegionCopy(rng, srcShape);
    Buffer src(from, srcShape, rng() % 3 == 0 ? rng() % 8 : 0);
    src.fillSpecial(rng);
    Buffer dst(to, copy.dstShape, rng() % 3 == 0 ? rng() % 8 : 0);
    expectSameAsCopyRegion(src, copy.srcRegion, dst, copy.dstRegion,
                           copy.permutation);
  }

  std::unique_ptr<Device> device_;
};

TEST_F(CudaKernel, RandomCopiesMatchCopyRegion) {
  std::mt19937_64 rng(20260502);
  for (int trial = 0; trial < 1500 && !HasFailure(); ++trial) {
    size_t rank = 1 + rng() % 5;
    std::vector<int64_t> shape;
    for (size_t i = 0; i < rank; ++i)
      shape.push_back(1 + int64_t(rng() % (rng() % 3 == 0 ? 70 : 7)));
    auto [from, to] = randomDTypes(rng);
    randomCopy(rng, shape, from, to);
  }
}

TEST_F(CudaKernel, EveryDTypePairOnEveryPath) {
  // Every supported pair: a large transpose, a gather, a strided-row copy
  // and one long contiguous run, each with hundreds of thousands of
  // hard-case elements, at aligned and odd addresses.
  std::mt19937_64 rng(17);
  std::vector<std::pair<DType, DType>> pairs = everyDTypePair();
  Permutation transpose = Permutation::reversed(2);
  for (auto [from, to] : pairs) {
    for (size_t offset : {size_t(0), size_t(3)}) {
      std::string what = std::string(dtypeName(from)) + " to " +
                         std::string(dtypeName(to)) + " at offset " +
                         std::to_string(offset);
      SCOPED_TRACE(what);
      // A 2-D transpose with partial tiles on both sides.
      Buffer matrix(from, {517, 300}, offset);
      matrix.fillSpecial(rng);
      Buffer transposed(to, {300, 517}, offset);
      expectSameAsCopyRegion(matrix, Box::fromShape({517, 300}), transposed,
                             Box::fromShape({300, 517}), transpose);
      // A gather: a sub-box through a 3-D permutation whose
      // source-contiguous axis is too short for tiles.
      Buffer cube(from, {30, 40, 50}, offset);
      cube.fillSpecial(rng);
      std::optional<Permutation> p = Permutation::fromAxes({1, 2, 0}, 3);
      Buffer gathered(to, {38, 9, 28}, offset);
      expectSameAsCopyRegion(cube, Box({1, 1, 2}, {28, 38, 9}), gathered,
                             Box::fromShape({38, 9, 28}), *p);
      // Rows of a column slice (a tensor-parallel split of the last axis).
      Buffer rows(to, {517, 100}, offset);
      expectSameAsCopyRegion(matrix, Box({0, 100}, {517, 100}), rows,
                             Box::fromShape({517, 100}),
                             Permutation::identity(2));
      // One long run.
      Buffer run(from, {1 << 20}, offset);
      run.fillSpecial(rng);
      Buffer runTarget(to, {1 << 20}, offset == 0 ? 0 : 1);
      expectSameAsCopyRegion(run, Box::fromShape({1 << 20}), runTarget,
                             Box::fromShape({1 << 20}),
                             Permutation::identity(1));
      if (HasFailure())
        return;
    }
  }
}

TEST_F(CudaKernel, TransposesWithPartialTilesAndBatches) {
  std::mt19937_64 rng(5);
  struct Case {
    std::vector<int64_t> shape;
    std::vector<int64_t> axes;
  };
  for (const Case &c :
       {Case{{100, 77}, {1, 0}}, Case{{33, 65}, {1, 0}}, Case{{16, 16}, {1, 0}},
        Case{{17, 3000}, {1, 0}}, Case{{3, 70, 45}, {0, 2, 1}},
        Case{{70, 3, 45}, {2, 1, 0}}, Case{{40, 3, 50}, {2, 1, 0}},
        Case{{2, 3, 37, 41}, {1, 0, 3, 2}}, Case{{2, 40, 3, 33}, {3, 2, 0, 1}},
        Case{{5, 2, 3, 20, 18}, {4, 1, 0, 2, 3}}, Case{{1024, 1024}, {1, 0}},
        // Even extents and strides: rows and columns move in pairs.
        Case{{100, 78}, {1, 0}}, Case{{130, 66}, {1, 0}},
        Case{{4, 70, 46}, {0, 2, 1}}, Case{{2, 40, 4, 34}, {3, 2, 0, 1}}}) {
    std::optional<Permutation> p =
        Permutation::fromAxes(c.axes, c.shape.size());
    ASSERT_TRUE(p);
    for (auto [from, to] :
         {std::pair{DType::BF16, DType::BF16},
          std::pair{DType::F32, DType::F32}, std::pair{DType::U8, DType::U8},
          std::pair{DType::I64, DType::I64}, std::pair{DType::BF16, DType::F32},
          std::pair{DType::F32, DType::BF16}, std::pair{DType::F64, DType::F16},
          std::pair{DType::F16, DType::F64}}) {
      for (size_t offset : {size_t(0), size_t(1)}) {
        Buffer src(from, c.shape, offset);
        src.fillSpecial(rng);
        Buffer dst(to, p->apply(c.shape), offset * 3);
        expectSameAsCopyRegion(src, Box::fromShape(c.shape), dst,
                               Box::fromShape(dst.shape), *p);
        if (HasFailure())
          return;
      }
    }
  }
}

TEST_F(CudaKernel, GridsLargerThanOneLaunchDimension) {
  std::mt19937_64 rng(23);
  // More row tiles than gridDim.y holds (65535 * 32 rows).
  Buffer tall(DType::BF16, {16, 2200000});
  tall.fillSpecial(rng);
  Buffer tallTarget(DType::F32, {2200000, 16});
  expectSameAsCopyRegion(tall, Box::fromShape({16, 2200000}), tallTarget,
                         Box::fromShape({2200000, 16}),
                         Permutation::reversed(2));
  // More batches than gridDim.z holds.
  Buffer batched(DType::F16, {70000, 16, 17});
  batched.fillSpecial(rng);
  Buffer batchedTarget(DType::F16, {70000, 17, 16});
  expectSameAsCopyRegion(batched, Box::fromShape({70000, 16, 17}),
                         batchedTarget, Box::fromShape({70000, 17, 16}),
                         *Permutation::fromAxes({0, 2, 1}, 3));
  // An elementwise copy many times larger than the resident grid.
  Buffer wide(DType::F32, {3, 9000000});
  wide.fillSpecial(rng);
  Buffer wideTarget(DType::F16, {9000000, 2});
  expectSameAsCopyRegion(wide, Box({1, 0}, {2, 9000000}), wideTarget,
                         Box::fromShape({9000000, 2}),
                         Permutation::reversed(2));
}

TEST_F(CudaKernel, CopiesOfMoreThan2To31Elements) {
  // 64-bit indexing: columns 1-2 of a [2^30 + 3, 3] byte tensor, 2^31 + 6
  // one-byte elements in runs of two at odd addresses, so neither a memcpy
  // nor wider words apply (5.4 GB on the GPU, about 10 GB on the host).
  const int64_t rows = (int64_t(1) << 30) + 3;
  Buffer src(DType::U8, {rows, 3});
  for (size_t i = 0; i < src.bytes(); ++i)
    src.data()[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
  Buffer dst(DType::U8, {rows, 2});
  expectSameAsCopyRegion(src, Box({0, 1}, {rows, 2}), dst,
                         Box::fromShape({rows, 2}), Permutation::identity(2));
}

TEST_F(CudaKernel, CopiesQueueOnTheirStream) {
  // Copies queued back to back on one stream (each reading what the one
  // before wrote) run in order.
  std::mt19937_64 rng(29);
  Buffer src(DType::F32, {300, 200});
  src.fillSpecial(rng);
  Buffer middle(DType::BF16, {200, 300});
  Buffer last(DType::F64, {300, 200});
  Buffer expectedMiddle = middle, expectedLast = last;
  ASSERT_TRUE(copyRegion(src.view(), Box::fromShape({300, 200}),
                         expectedMiddle.mutableView(),
                         Box::fromShape({200, 300}), Permutation::reversed(2)));
  ASSERT_TRUE(copyRegion(expectedMiddle.view(), Box::fromShape({200, 300}),
                         expectedLast.mutableView(), Box::fromShape({300, 200}),
                         Permutation::reversed(2)));
  DeviceMemory a = upload(src), b = upload(middle), c = upload(last);
  ASSERT_TRUE(a && b && c);
  // The uploads went to stream 0.
  ASSERT_TRUE(device_->synchronize(0));
  Expected<StridedCopy> first = describeRegionCopy(
      TensorView(a.data(), src.bytes(), DType::F32, {300, 200}),
      Box::fromShape({300, 200}),
      MutableTensorView(b.data(), middle.bytes(), DType::BF16, {200, 300}),
      Box::fromShape({200, 300}), Permutation::reversed(2));
  Expected<StridedCopy> second = describeRegionCopy(
      TensorView(b.data(), middle.bytes(), DType::BF16, {200, 300}),
      Box::fromShape({200, 300}),
      MutableTensorView(c.data(), last.bytes(), DType::F64, {300, 200}),
      Box::fromShape({300, 200}), Permutation::reversed(2));
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(device_->copy(1, *first));
  ASSERT_TRUE(device_->copy(1, *second));
  std::vector<unsigned char> out(last.storage.size());
  ASSERT_TRUE(device_->download(1, out.data(), c.data(), out.size()));
  ASSERT_TRUE(device_->synchronize(1));
  EXPECT_TRUE(out == expectedLast.storage);
}

} // namespace

TEST_F(CudaKernel, IntegerCastsAndTheirFailureWordMatchTheHost) {
  // Every dtype pair (integer and bool ones included) on a gather and a
  // long run: the GPU gives the bytes and the cast-failure word (the
  // smallest destination offset without a result, by atomicMin) that the
  // host run of the same bodies gives (runStridedCopyOnHost).
  std::mt19937_64 rng(23);
  std::optional<Permutation> p = Permutation::fromAxes({1, 2, 0}, 3);
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes) {
      if (from == to || !isCastSupported(from, to))
        continue; // the opaque dtypes are only copied
      SCOPED_TRACE(std::string(dtypeName(from)) + " to " +
                   std::string(dtypeName(to)));
      Buffer cube(from, {30, 40, 50}, 0);
      cube.fillSpecial(rng);
      Buffer gathered(to, {38, 9, 28}, 0);
      Box srcRegion({1, 1, 2}, {28, 38, 9});
      Box dstRegion = Box::fromShape({38, 9, 28});
      // The host: the same StridedCopy on host memory.
      Buffer expected = gathered;
      Expected<StridedCopy> hostCopy = describeRegionCopy(
          cube.view(), srcRegion, expected.mutableView(), dstRegion, *p);
      ASSERT_TRUE(hostCopy) << hostCopy.error().toString();
      unsigned long long hostWord = kNoCastFailure;
      hostCopy->castFailure = &hostWord;
      runStridedCopyOnHost(*hostCopy);
      // The GPU.
      DeviceMemory fromMemory = upload(cube), toMemory = upload(gathered);
      Expected<DeviceMemory> word = device_->allocate(8);
      ASSERT_TRUE(word && fromMemory && toMemory);
      unsigned long long gpuWord = kNoCastFailure;
      ASSERT_TRUE(device_->upload(0, word->data(), &gpuWord, 8));
      Expected<StridedCopy> copy = describeRegionCopy(
          TensorView(fromMemory.data(), cube.bytes(), from, cube.shape),
          srcRegion,
          MutableTensorView(toMemory.data(), gathered.bytes(), to,
                            gathered.shape),
          dstRegion, *p);
      ASSERT_TRUE(copy) << copy.error().toString();
      copy->castFailure = reinterpret_cast<unsigned long long *>(word->data());
      ASSERT_TRUE(device_->copy(0, *copy));
      std::vector<unsigned char> actual(gathered.storage.size());
      ASSERT_TRUE(
          device_->download(0, actual.data(), toMemory.data(), actual.size()));
      ASSERT_TRUE(device_->download(0, &gpuWord, word->data(), 8));
      ASSERT_TRUE(device_->synchronize(0));
      EXPECT_EQ(gpuWord, hostWord);
      EXPECT_TRUE(actual == expected.storage);
      if (HasFailure())
        return;
    }
}
