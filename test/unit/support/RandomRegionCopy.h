//===- RandomRegionCopy.h - Random region copies for copy tests -*- C++ -*-===//
//
// The CPU strided copy (StridedCopyTest) and the CUDA kernels
// (CudaKernelTest) are both checked against copyRegion on the same kind of
// random copies: a box of a source tensor, a permutation, a destination at
// least as large, tensors at odd addresses filled with hard-case elements.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_RANDOMREGIONCOPY_H
#define AOA_TEST_UNIT_RANDOMREGIONCOPY_H

#include "aoa/ir/Box.h"
#include "aoa/ir/DType.h"
#include "aoa/ir/Permutation.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/transforms/TensorView.h"

#include "RandomGeometry.h"
#include "SpecialValues.h"

#include "llvm/ADT/SmallVector.h"

#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace aoa::test {

/// The floating dtypes: every pair of them casts.
constexpr DType kFloating[] = {DType::F64,   DType::F32,    DType::F16,
                               DType::BF16,  DType::F8E4M3, DType::F8E5M2,
                               DType::F8E8M0};

/// A tensor's bytes on the host, `offset` bytes into its storage (to place
/// it at an odd address), with views of it.
struct TensorBuffer {
  std::vector<unsigned char> storage;
  size_t offset;
  DType dtype;
  std::vector<int64_t> shape;

  TensorBuffer(DType dtype, std::vector<int64_t> shape, size_t offset = 0,
               unsigned char fill = 0xA5)
      : offset(offset), dtype(dtype), shape(std::move(shape)) {
    storage.assign(offset + bytes() + 7, fill);
  }
  size_t elements() const {
    size_t volume = 1;
    for (int64_t extent : shape)
      volume *= size_t(extent);
    return volume;
  }
  size_t bytes() const { return elements() * dtypeSize(dtype); }
  unsigned char *data() { return storage.data() + offset; }
  const unsigned char *data() const { return storage.data() + offset; }
  runtime::TensorView view() const {
    return runtime::TensorView(data(), bytes(), dtype, shape);
  }
  runtime::MutableTensorView mutableView() {
    return runtime::MutableTensorView(data(), bytes(), dtype, shape);
  }
  void fillSpecial(std::mt19937_64 &rng) {
    fillSpecialElements(dtype, data(), elements(), rng);
  }
};

/// "bfloat16[4, 6] [0:2, 0:6] (offset 3) -> … through [1, 0]".
inline std::string describeCopy(const TensorBuffer &src, const Box &srcRegion,
                                const TensorBuffer &dst, const Box &dstRegion,
                                const Permutation &permutation) {
  return std::string(dtypeName(src.dtype)) + formatShape(src.shape) + " " +
         srcRegion.toString() + " (offset " + std::to_string(src.offset) +
         ") -> " + std::string(dtypeName(dst.dtype)) + formatShape(dst.shape) +
         " " + dstRegion.toString() + " (offset " + std::to_string(dst.offset) +
         ") through " + permutation.toString();
}

/// A random interval of `size` inside [0, extent).
inline Interval placeInside(std::mt19937_64 &rng, int64_t size, int64_t extent) {
  int64_t begin = int64_t(rng() % uint64_t(extent - size + 1));
  return {begin, begin + size};
}

/// A random dtype pair: two floating dtypes (equal ones too), or one dtype
/// to itself.
inline std::pair<DType, DType> randomDTypes(std::mt19937_64 &rng) {
  if (rng() % 3 != 0)
    return {kFloating[rng() % std::size(kFloating)],
            kFloating[rng() % std::size(kFloating)]};
  DType dtype = kAllDTypes[rng() % std::size(kAllDTypes)];
  return {dtype, dtype};
}

/// Every pair a copy is tested with: each float dtype to each float dtype,
/// and every dtype to itself.
inline std::vector<std::pair<DType, DType>> everyDTypePair() {
  std::vector<std::pair<DType, DType>> pairs;
  for (DType from : kFloating)
    for (DType to : kFloating)
      pairs.push_back({from, to});
  for (DType dtype : kAllDTypes)
    pairs.push_back({dtype, dtype});
  return pairs;
}

/// The geometry of one random copy out of a source of shape `srcShape`.
struct RandomRegionCopy {
  Box srcRegion;
  Permutation permutation;
  std::vector<int64_t> dstShape;
  Box dstRegion;
};

/// A box of `srcShape` (whole along an axis two times in three), a random
/// permutation (the identity one time in four), and a destination up to 3
/// elements larger along an axis one time in three, the box placed at
/// random in it.
inline RandomRegionCopy randomRegionCopy(std::mt19937_64 &rng,
                                         const std::vector<int64_t> &srcShape) {
  size_t rank = srcShape.size();
  llvm::SmallVector<Interval, 8> srcDims;
  for (size_t i = 0; i < rank; ++i) {
    int64_t size = rng() % 3 == 0 ? 1 + int64_t(rng() % uint64_t(srcShape[i]))
                                  : srcShape[i];
    srcDims.push_back(placeInside(rng, size, srcShape[i]));
  }
  Box srcRegion(srcDims);
  Permutation permutation = rng() % 4 == 0 ? Permutation::identity(rank)
                                           : randomPermutation(rng, rank);
  std::vector<int64_t> boxShape = permutation.apply(srcRegion.shape());
  std::vector<int64_t> dstShape;
  llvm::SmallVector<Interval, 8> dstDims;
  for (size_t i = 0; i < rank; ++i) {
    dstShape.push_back(boxShape[i] + (rng() % 3 == 0 ? int64_t(rng() % 4) : 0));
    dstDims.push_back(placeInside(rng, boxShape[i], dstShape.back()));
  }
  return {std::move(srcRegion), std::move(permutation), std::move(dstShape),
          Box(dstDims)};
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_RANDOMREGIONCOPY_H
