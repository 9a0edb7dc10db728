//===- RegionCopy.cpp -----------------------------------------------------===//
//
// The copy is described as a list of dimensions in destination order, each
// with its extent and its stride (in elements) in the source and in the
// destination. Dimensions of extent 1 are dropped and neighbours that are
// contiguous in both tensors are merged, so most copies end up with a long
// contiguous innermost run or as a plain 2-D transpose.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/RegionCopy.h"

#include "ElementOps.h"
#include "Messages.h"
#include "aoa/runtime/Cast.h"

#include <algorithm>
#include <functional>
#include <string>

namespace aoa::runtime {

namespace {

struct CopyDim {
  int64_t extent;
  int64_t srcStride;
  int64_t dstStride;
};

using CopyDims = llvm::SmallVector<CopyDim, 8>;

/// Transpose tiles are kTile x kTile elements: at most 8 KiB of each side
/// for 8-byte elements, so a tile's source lines stay in L1 while it is
/// written row by row.
constexpr int64_t kTile = 32;

const char *const kPlanHint =
    "the copy does not fit its buffers; the plan is inconsistent, recompile "
    "it";

Error copyError(const std::string &what, const char *hint = kPlanHint) {
  return Error{"region copy: " + what, hint};
}

/// The bytes of a tensor of `shape` and `dtype`; nullopt when an extent is
/// negative or the size does not fit in size_t.
std::optional<size_t> byteSizeOf(llvm::ArrayRef<int64_t> shape, DType dtype) {
  size_t bytes = dtypeSize(dtype);
  for (int64_t extent : shape) {
    if (extent < 0)
      return std::nullopt;
    if (extent != 0 && bytes > SIZE_MAX / size_t(extent))
      return std::nullopt;
    bytes *= size_t(extent);
  }
  return bytes;
}

/// Checks one side of the copy: its buffer holds its shape and its region
/// lies inside the shape. `side` is "source" or "destination".
Status checkSide(const char *side, const void *data, size_t byteSize,
                 DType dtype, llvm::ArrayRef<int64_t> shape, const Box &region,
                 size_t &neededBytes) {
  std::string sideText(side);
  if (shape.size() != region.rank())
    return copyError(sideText + " region " + region.toString() + " has rank " +
                     std::to_string(region.rank()) + ", but the " + sideText +
                     " tensor's shape " + formatExtents(shape) + " has rank " +
                     std::to_string(shape.size()));
  std::optional<size_t> bytes = byteSizeOf(shape, dtype);
  if (!bytes)
    return copyError(sideText + " shape " + formatExtents(shape) +
                     " has a negative extent or is too large");
  if (*bytes > byteSize)
    return copyError(sideText + " buffer of " + std::to_string(byteSize) +
                     " bytes cannot hold shape " + formatExtents(shape) +
                     " of " + std::string(dtypeName(dtype)) + " (" +
                     std::to_string(*bytes) + " bytes)");
  if (*bytes > 0 && !data)
    return copyError(sideText + " buffer is null");
  for (size_t i = 0; i < region.rank(); ++i) {
    const Interval &dim = region.dim(i);
    if (dim.begin < 0 || dim.end < dim.begin || dim.end > shape[i])
      return copyError(sideText + " region " + region.toString() +
                       " is outside the " + sideText + " tensor of shape " +
                       formatExtents(shape));
  }
  neededBytes = *bytes;
  return Status();
}

Status validate(const TensorView &src, const Box &srcRegion,
                const MutableTensorView &dst, const Box &dstRegion,
                const Permutation &permutation) {
  if (!isCastSupported(src.dtype, dst.dtype))
    return copyError("cannot cast " + std::string(dtypeName(src.dtype)) +
                         " to " + std::string(dtypeName(dst.dtype)) +
                         ": casts are defined between floating dtypes only",
                     "remove the cast, or cast between floating dtypes");
  size_t srcBytes = 0, dstBytes = 0;
  if (Status status = checkSide("source", src.data, src.byteSize, src.dtype,
                                src.shape, srcRegion, srcBytes);
      !status)
    return status;
  if (Status status = checkSide("destination", dst.data, dst.byteSize,
                                dst.dtype, dst.shape, dstRegion, dstBytes);
      !status)
    return status;
  if (permutation.rank() != srcRegion.rank() ||
      dstRegion.rank() != srcRegion.rank())
    return copyError(
        "the source region has rank " + std::to_string(srcRegion.rank()) +
        ", the destination region " + std::to_string(dstRegion.rank()) +
        " and the permutation " + std::to_string(permutation.rank()));
  std::vector<int64_t> expected = permutation.apply(srcRegion.shape());
  if (dstRegion.shape() != expected)
    return copyError("destination region " + dstRegion.toString() +
                     " has shape " + formatExtents(dstRegion.shape()) +
                     ", but source region " + srcRegion.toString() +
                     " permuted by " + permutation.toString() + " has shape " +
                     formatExtents(expected));
  if (srcRegion.volume() == 0)
    return Status();
  auto *srcBegin = static_cast<const std::byte *>(src.data);
  auto *dstBegin = static_cast<const std::byte *>(dst.data);
  std::less<const std::byte *> before;
  if (before(srcBegin, dstBegin + dstBytes) &&
      before(dstBegin, srcBegin + srcBytes))
    return copyError("the source and destination buffers overlap",
                     "copy between separate buffers");
  return Status();
}

/// The copy's dimensions in destination order, without extent-1 dimensions
/// and with neighbours merged where they are contiguous in both tensors.
/// Never empty: a single element is one dimension of extent 1.
CopyDims describeCopy(const TensorView &src, const Box &srcRegion,
                      const MutableTensorView &dst,
                      const Permutation &permutation) {
  std::vector<int64_t> srcStrides = rowMajorStrides(src.shape);
  std::vector<int64_t> dstStrides = rowMajorStrides(dst.shape);
  CopyDims dims;
  for (size_t i = 0; i < srcRegion.rank(); ++i) {
    CopyDim dim{srcRegion.dim(permutation[i]).size(),
                srcStrides[permutation[i]], dstStrides[i]};
    if (dim.extent == 1)
      continue;
    if (!dims.empty()) {
      CopyDim &outer = dims.back();
      if (outer.srcStride == dim.srcStride * dim.extent &&
          outer.dstStride == dim.dstStride * dim.extent) {
        outer = {outer.extent * dim.extent, dim.srcStride, dim.dstStride};
        continue;
      }
    }
    dims.push_back(dim);
  }
  if (dims.empty())
    dims.push_back({1, 1, 1});
  return dims;
}

/// Calls body(srcOffset, dstOffset), in elements, for every index of the
/// `outer` dimensions (row-major); once, with offsets 0, when there are none.
template <typename Body>
void forEachOuterIndex(llvm::ArrayRef<CopyDim> outer, Body &&body) {
  llvm::SmallVector<int64_t, 8> index(outer.size(), 0);
  int64_t srcOffset = 0, dstOffset = 0;
  while (true) {
    body(srcOffset, dstOffset);
    size_t i = outer.size();
    while (true) {
      if (i == 0)
        return;
      --i;
      if (++index[i] < outer[i].extent) {
        srcOffset += outer[i].srcStride;
        dstOffset += outer[i].dstStride;
        break;
      }
      srcOffset -= (outer[i].extent - 1) * outer[i].srcStride;
      dstOffset -= (outer[i].extent - 1) * outer[i].dstStride;
      index[i] = 0;
    }
  }
}

template <typename Op>
void runCopy(llvm::ArrayRef<CopyDim> dims, const std::byte *src,
             std::byte *dst) {
  using Src = typename Op::Src;
  using Dst = typename Op::Dst;
  constexpr int64_t srcSize = sizeof(Src), dstSize = sizeof(Dst);
  const CopyDim &inner = dims.back();
  llvm::ArrayRef<CopyDim> outer = dims.drop_back();

  // Contiguous runs on both sides.
  if (inner.srcStride == 1 && inner.dstStride == 1) {
    forEachOuterIndex(outer, [&](int64_t s, int64_t d) {
      convertRun<Op>(src + s * srcSize, dst + d * dstSize,
                     size_t(inner.extent));
    });
    return;
  }

  // A transpose: the destination's rows run along `inner`, the source's
  // along another dimension.
  auto contiguousInSource =
      std::find_if(outer.begin(), outer.end(),
                   [](const CopyDim &dim) { return dim.srcStride == 1; });
  if (inner.dstStride == 1 && contiguousInSource != outer.end()) {
    const CopyDim rows = *contiguousInSource;
    CopyDims rest;
    for (const CopyDim &dim : outer)
      if (&dim != contiguousInSource)
        rest.push_back(dim);
    forEachOuterIndex(rest, [&](int64_t s, int64_t d) {
      for (int64_t r0 = 0; r0 < rows.extent; r0 += kTile) {
        int64_t r1 = std::min(r0 + kTile, rows.extent);
        for (int64_t c0 = 0; c0 < inner.extent; c0 += kTile) {
          int64_t c1 = std::min(c0 + kTile, inner.extent);
          for (int64_t r = r0; r < r1; ++r) {
            const std::byte *from = src + (s + r) * srcSize;
            std::byte *to = dst + (d + r * rows.dstStride) * dstSize;
            for (int64_t c = c0; c < c1; ++c)
              storeElement<Dst>(to + c * dstSize,
                                Op::apply(loadElement<Src>(
                                    from + c * inner.srcStride * srcSize)));
          }
        }
      }
    });
    return;
  }

  // Anything else, element by element.
  forEachOuterIndex(outer, [&](int64_t s, int64_t d) {
    for (int64_t k = 0; k < inner.extent; ++k)
      storeElement<Dst>(dst + (d + k * inner.dstStride) * dstSize,
                        Op::apply(loadElement<Src>(
                            src + (s + k * inner.srcStride) * srcSize)));
  });
}

/// The row-major offset, in elements, of the region's first element.
int64_t regionStart(const Box &region, llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides = rowMajorStrides(shape);
  int64_t offset = 0;
  for (size_t i = 0; i < region.rank(); ++i)
    offset += region.dim(i).begin * strides[i];
  return offset;
}

} // namespace

Status copyRegion(const TensorView &src, const Box &srcRegion,
                  const MutableTensorView &dst, const Box &dstRegion,
                  const Permutation &permutation) {
  if (Status status = validate(src, srcRegion, dst, dstRegion, permutation);
      !status)
    return status;
  if (srcRegion.volume() == 0)
    return Status();
  CopyDims dims = describeCopy(src, srcRegion, dst, permutation);
  const std::byte *from =
      static_cast<const std::byte *>(src.data) +
      regionStart(srcRegion, src.shape) * int64_t(dtypeSize(src.dtype));
  std::byte *to =
      static_cast<std::byte *>(dst.data) +
      regionStart(dstRegion, dst.shape) * int64_t(dtypeSize(dst.dtype));
  withElementOp(src.dtype, dst.dtype,
                [&](auto op) { runCopy<decltype(op)>(dims, from, to); });
  return Status();
}

Status copyRegion(const TensorView &src, const Box &srcRegion,
                  const MutableTensorView &dst, const Box &dstRegion) {
  return copyRegion(src, srcRegion, dst, dstRegion,
                    Permutation::identity(srcRegion.rank()));
}

} // namespace aoa::runtime
