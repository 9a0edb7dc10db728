//===- BlockTransposeTest.cpp - Tiled transposes, fused with casts --------===//
//
// copyRegion moves transposes of 2- and 4-byte words and unchecked casts in
// SSE2 blocks within tiles, casting a tile in a buffer on the way, and
// writes a destination of 8 MiB or more with streaming stores
// (runtime/transforms/lib/TransposeTile.h). These tests compare its bytes,
// those around the destination region included, with an element-by-element
// transpose that casts with the scalar CastElement::convert: random bytes
// (NaN patterns too) for copies and casts between floats, integers and
// both, in whole tiles, partial tiles, tiles that are not whole blocks,
// regions at odd offsets (no streaming), a 3-D permutation, and tensors
// large enough to stream.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/RegionCopy.h"
#include "aoa/runtime/transforms/StridedCopyElement.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace aoa;
using namespace aoa::runtime;

namespace {

std::vector<unsigned char> randomBytes(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> bytes(count);
  for (size_t i = 0; i < count; i += 8) {
    uint64_t word = rng();
    std::memcpy(bytes.data() + i, &word, std::min<size_t>(8, count - i));
  }
  return bytes;
}

/// The element `From` at `src` (any alignment) as `To` at `dst`, by the
/// scalar reference (a copy when the dtypes are equal).
template <DType From, DType To>
void referenceElement(const unsigned char *src, unsigned char *dst) {
  using Src = typename ElementStorage<From>::type;
  using Dst = typename ElementStorage<To>::type;
  Src value;
  std::memcpy(&value, src, sizeof(Src));
  Dst result;
  if constexpr (From == To)
    result = value;
  else
    result = CastElement<From, To>::convert(value);
  std::memcpy(dst, &result, sizeof(Dst));
}

/// Transposes the [rows, columns] region at `srcOffset` of a [srcRows,
/// srcColumns] `From` tensor into the region at `dstOffset` of a [dstRows,
/// dstColumns] `To` tensor, and compares every destination byte with the
/// model.
template <DType From, DType To>
void expectTransposeMatches(int64_t rows, int64_t columns, int64_t srcRows,
                            int64_t srcColumns, std::vector<int64_t> srcOffset,
                            int64_t dstRows, int64_t dstColumns,
                            std::vector<int64_t> dstOffset) {
  SCOPED_TRACE(std::string(dtypeName(From)) + " -> " +
               std::string(dtypeName(To)) + ", [" + std::to_string(rows) +
               ", " + std::to_string(columns) + "]");
  constexpr size_t srcSize = sizeof(typename ElementStorage<From>::type);
  constexpr size_t dstSize = sizeof(typename ElementStorage<To>::type);
  std::vector<unsigned char> src =
      randomBytes(size_t(srcRows * srcColumns) * srcSize, uint64_t(rows));
  std::vector<unsigned char> dst(size_t(dstRows * dstColumns) * dstSize, 0xA5);
  std::vector<unsigned char> expected = dst;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < columns; ++c) {
      size_t from = size_t((srcOffset[0] + r) * srcColumns + srcOffset[1] + c);
      size_t to = size_t((dstOffset[0] + c) * dstColumns + dstOffset[1] + r);
      referenceElement<From, To>(src.data() + from * srcSize,
                                 expected.data() + to * dstSize);
    }
  TensorView srcView(src.data(), src.size(), From, {srcRows, srcColumns});
  MutableTensorView dstView(dst.data(), dst.size(), To, {dstRows, dstColumns});
  ASSERT_TRUE(copyRegion(srcView, Box(srcOffset, {rows, columns}), dstView,
                         Box(dstOffset, {columns, rows}),
                         Permutation::reversed(2)));
  size_t mismatch = 0;
  while (mismatch < dst.size() && dst[mismatch] == expected[mismatch])
    ++mismatch;
  EXPECT_EQ(mismatch, dst.size()) << "first differing destination byte";
}

/// The whole [rows, columns] tensor transposed, and a region of it at odd
/// offsets of larger tensors.
template <DType From, DType To>
void expectTransposesMatch(int64_t rows, int64_t columns) {
  expectTransposeMatches<From, To>(rows, columns, rows, columns, {0, 0},
                                   columns, rows, {0, 0});
  expectTransposeMatches<From, To>(rows, columns, rows + 3, columns + 5, {1, 3},
                                   columns + 2, rows + 7, {2, 5});
}

template <DType From, DType To> void expectAllShapesMatch() {
  // Whole 128 x 128 and 64 x 64 tiles with partial tiles of whole blocks;
  // partial tiles that are not whole blocks; a single block; a tensor
  // below the tile size.
  expectTransposesMatch<From, To>(264, 200);
  expectTransposesMatch<From, To>(131, 77);
  expectTransposesMatch<From, To>(8, 8);
  expectTransposesMatch<From, To>(40, 24);
}

TEST(BlockTranspose, CopiesMatchTheModel) {
  expectAllShapesMatch<DType::BF16, DType::BF16>();
  expectAllShapesMatch<DType::F32, DType::F32>();
  expectAllShapesMatch<DType::U8, DType::U8>();
  expectAllShapesMatch<DType::F64, DType::F64>();
}

TEST(BlockTranspose, FusedFloatCastsMatchTheReference) {
  expectAllShapesMatch<DType::BF16, DType::F32>();
  expectAllShapesMatch<DType::F32, DType::BF16>();
  expectAllShapesMatch<DType::F16, DType::F32>();
  expectAllShapesMatch<DType::F32, DType::F16>();
  expectAllShapesMatch<DType::BF16, DType::F8E4M3>();
  expectAllShapesMatch<DType::F8E4M3, DType::BF16>();
  expectAllShapesMatch<DType::F8E5M2, DType::F32>();
  expectAllShapesMatch<DType::F32, DType::F8E8M0>();
  expectAllShapesMatch<DType::F64, DType::F32>();
  expectAllShapesMatch<DType::F64, DType::BF16>();
  expectAllShapesMatch<DType::F32, DType::F64>();
  expectAllShapesMatch<DType::F16, DType::BF16>();
}

TEST(BlockTranspose, FusedIntegerCastsMatchTheReference) {
  expectAllShapesMatch<DType::I16, DType::I32>();
  expectAllShapesMatch<DType::I32, DType::F32>();
  expectAllShapesMatch<DType::U8, DType::F16>();
  expectAllShapesMatch<DType::I8, DType::I16>();
}

TEST(BlockTranspose, LargeDestinationsStreamTheSameBytes) {
  // 8 MiB and more of destination: streaming stores, whole tensors aligned
  // (and the odd-offset regions, which cannot stream, beside them).
  expectTransposesMatch<DType::BF16, DType::BF16>(2048, 2056);
  expectTransposesMatch<DType::F32, DType::F32>(1024, 2056);
  expectTransposesMatch<DType::BF16, DType::F32>(1024, 2056);
  expectTransposesMatch<DType::F32, DType::BF16>(2048, 2056);
  expectTransposesMatch<DType::BF16, DType::F8E4M3>(4096, 2056);
}

TEST(BlockTranspose, ThreeDimensionalPermutationMatchesTheModel) {
  // [3, 72, 80] through [0, 2, 1]: a transpose under an outer dimension.
  const int64_t outer = 3, rows = 72, columns = 80;
  std::vector<unsigned char> src =
      randomBytes(size_t(outer * rows * columns) * 2, 5);
  std::vector<unsigned char> dst(size_t(outer * rows * columns) * 4, 0);
  std::vector<unsigned char> expected(dst.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < columns; ++c)
        referenceElement<DType::BF16, DType::F32>(
            src.data() + 2 * ((o * rows + r) * columns + c),
            expected.data() + 4 * ((o * columns + c) * rows + r));
  TensorView srcView(src.data(), src.size(), DType::BF16,
                     {outer, rows, columns});
  MutableTensorView dstView(dst.data(), dst.size(), DType::F32,
                            {outer, columns, rows});
  Permutation permutation = *Permutation::fromAxes({0, 2, 1}, 3);
  ASSERT_TRUE(copyRegion(srcView, Box({0, 0, 0}, {outer, rows, columns}),
                         dstView, Box({0, 0, 0}, {outer, columns, rows}),
                         permutation));
  EXPECT_EQ(dst, expected);
}

} // namespace
