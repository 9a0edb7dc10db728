//===- StoredRegion.cpp ---------------------------------------------------===//
#include "aoa/runtime/storage/StoredRegion.h"

#include "llvm/ADT/SmallVector.h"

namespace aoa::runtime {

namespace {

/// The run structure of `region` inside `box`: runs cover dimensions
/// [firstRunDim, rank) and are `runLength` elements long; the dimensions
/// before firstRunDim are iterated.
struct RunShape {
  size_t firstRunDim = 0;
  int64_t runLength = 1;
};

RunShape runShapeOf(const Box &box, const Box &region) {
  RunShape shape;
  size_t rank = box.rank();
  shape.firstRunDim = rank;
  for (size_t d = rank; d-- > 0;) {
    shape.firstRunDim = d;
    shape.runLength *= region.dim(d).size();
    if (region.dim(d) != box.dim(d))
      break;
  }
  return shape;
}

} // namespace

int64_t storedRunCount(const Box &storedBox, const Box &region) {
  int64_t volume = region.volume();
  if (volume == 0)
    return 0;
  RunShape shape = runShapeOf(storedBox, region);
  return volume / shape.runLength;
}

Status forEachStoredRun(const Box &storedBox,
                        const std::optional<FlatElementRange> &flat,
                        const Box &region,
                        llvm::function_ref<bool(const StoredRun &)> visit) {
  if (region.rank() != storedBox.rank() || !storedBox.contains(region))
    return Error{"region " + region.toString() +
                     " is not inside the stored box " + storedBox.toString(),
                 "the plan does not match the stored tensor; recompile it"};
  int64_t volume = region.volume();
  if (volume == 0)
    return Status();
  size_t rank = storedBox.rank();
  RunShape shape = runShapeOf(storedBox, region);
  std::vector<int64_t> strides = rowMajorStrides(storedBox.shape());

  // Index (in the box's flattening) of the first element of the region.
  int64_t firstIndex = 0;
  for (size_t d = 0; d < rank; ++d)
    firstIndex += (region.dim(d).begin - storedBox.dim(d).begin) * strides[d];
  int64_t lastIndex = 0; // of the last run's first element
  for (size_t d = 0; d < shape.firstRunDim; ++d)
    lastIndex += (region.dim(d).end - 1 - storedBox.dim(d).begin) * strides[d];
  for (size_t d = shape.firstRunDim; d < rank; ++d)
    lastIndex += (region.dim(d).begin - storedBox.dim(d).begin) * strides[d];

  int64_t base = flat ? flat->begin : 0;
  int64_t storedCount = flat ? flat->size() : storedBox.volume();
  if (firstIndex - base < 0 || lastIndex + shape.runLength - base > storedCount)
    return Error{"region " + region.toString() + " reaches elements [" +
                     std::to_string(firstIndex) + ", " +
                     std::to_string(lastIndex + shape.runLength) +
                     ") of the stored box " + storedBox.toString() +
                     ", outside its flat range [" + std::to_string(base) +
                     ", " + std::to_string(base + storedCount) + ")",
                 "the plan does not match the stored tensor; recompile it"};

  // Odometer over the dimensions before the run.
  llvm::SmallVector<int64_t, 8> position(shape.firstRunDim, 0);
  StoredRun run;
  run.count = shape.runLength;
  run.storedOffset = firstIndex - base;
  for (;;) {
    if (!visit(run))
      return Status();
    run.regionOffset += run.count;
    size_t d = shape.firstRunDim;
    while (d-- > 0) {
      run.storedOffset += strides[d];
      if (++position[d] < region.dim(d).size())
        break;
      run.storedOffset -= strides[d] * position[d];
      position[d] = 0;
    }
    if (d == size_t(-1))
      return Status();
  }
}

std::optional<int64_t>
singleStoredRun(const Box &storedBox,
                const std::optional<FlatElementRange> &flat, const Box &region) {
  int64_t runs = 0, offset = 0;
  Status walk = forEachStoredRun(storedBox, flat, region,
                                 [&](const StoredRun &run) {
                                   offset = run.storedOffset;
                                   return ++runs < 2;
                                 });
  if (!walk.ok() || runs != 1)
    return std::nullopt;
  return offset;
}

} // namespace aoa::runtime
