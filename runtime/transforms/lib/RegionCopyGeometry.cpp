//===- RegionCopyGeometry.cpp ---------------------------------------------===//
#include "RegionCopyGeometry.h"

#include "aoa/runtime/support/Messages.h"
#include "aoa/runtime/transforms/Cast.h"

#include <functional>
#include <optional>

namespace aoa::runtime {

const char *const kRegionCopyPlanHint =
    "the copy does not fit its buffers; the plan is inconsistent, recompile "
    "it";

Error regionCopyError(const std::string &what, const char *hint) {
  return Error{"region copy: " + what, hint};
}

namespace {

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
    return regionCopyError(sideText + " region " + region.toString() +
                           " has rank " + std::to_string(region.rank()) +
                           ", but the " + sideText + " tensor's shape " +
                           formatExtents(shape) + " has rank " +
                           std::to_string(shape.size()));
  std::optional<size_t> bytes = byteSizeOf(shape, dtype);
  if (!bytes)
    return regionCopyError(sideText + " shape " + formatExtents(shape) +
                           " has a negative extent or is too large");
  if (*bytes > byteSize)
    return regionCopyError(sideText + " buffer of " + std::to_string(byteSize) +
                           " bytes cannot hold shape " + formatExtents(shape) +
                           " of " + std::string(dtypeName(dtype)) + " (" +
                           std::to_string(*bytes) + " bytes)");
  if (*bytes > 0 && !data)
    return regionCopyError(sideText + " buffer is null");
  for (size_t i = 0; i < region.rank(); ++i) {
    const Interval &dim = region.dim(i);
    if (dim.begin < 0 || dim.end < dim.begin || dim.end > shape[i])
      return regionCopyError(sideText + " region " + region.toString() +
                             " is outside the " + sideText +
                             " tensor of shape " + formatExtents(shape));
  }
  neededBytes = *bytes;
  return Status();
}

} // namespace

Status validateRegionCopy(const TensorView &src, const Box &srcRegion,
                          const MutableTensorView &dst, const Box &dstRegion,
                          const Permutation &permutation) {
  size_t srcBytes = 0, dstBytes = 0;
  if (Status status = checkSide("source", src.data, src.byteSize, src.dtype,
                                src.shape, srcRegion, srcBytes);
      !status)
    return status;
  if (Status status = checkSide("destination", dst.data, dst.byteSize,
                                dst.dtype, dst.shape, dstRegion, dstBytes);
      !status)
    return status;
  if (!isCastSupported(src.dtype, dst.dtype))
    return castUnsupportedError(src.dtype, dst.dtype);
  if (permutation.rank() != srcRegion.rank() ||
      dstRegion.rank() != srcRegion.rank())
    return regionCopyError(
        "the source region has rank " + std::to_string(srcRegion.rank()) +
        ", the destination region " + std::to_string(dstRegion.rank()) +
        " and the permutation " + std::to_string(permutation.rank()));
  std::vector<int64_t> expected = permutation.apply(srcRegion.shape());
  if (dstRegion.shape() != expected)
    return regionCopyError("destination region " + dstRegion.toString() +
                           " has shape " + formatExtents(dstRegion.shape()) +
                           ", but source region " + srcRegion.toString() +
                           " permuted by " + permutation.toString() +
                           " has shape " + formatExtents(expected));
  if (srcRegion.volume() == 0)
    return Status();
  auto *srcBegin = static_cast<const std::byte *>(src.data);
  auto *dstBegin = static_cast<const std::byte *>(dst.data);
  // std::less gives a total order even on unrelated pointers.
  std::less<const std::byte *> before;
  if (before(srcBegin, dstBegin + dstBytes) &&
      before(dstBegin, srcBegin + srcBytes))
    return regionCopyError("the source and destination buffers overlap",
                           "copy between separate buffers");
  return Status();
}

CopyDims describeCopyDims(llvm::ArrayRef<int64_t> srcShape,
                          const Box &srcRegion,
                          llvm::ArrayRef<int64_t> dstShape,
                          const Permutation &permutation) {
  std::vector<int64_t> srcStrides = rowMajorStrides(srcShape);
  std::vector<int64_t> dstStrides = rowMajorStrides(dstShape);
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

int64_t regionStart(const Box &region, llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides = rowMajorStrides(shape);
  int64_t offset = 0;
  for (size_t i = 0; i < region.rank(); ++i)
    offset += region.dim(i).begin * strides[i];
  return offset;
}

} // namespace aoa::runtime
