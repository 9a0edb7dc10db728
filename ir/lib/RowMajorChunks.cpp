//===- RowMajorChunks.cpp -------------------------------------------------===//
#include "aoa/ir/RowMajorChunks.h"

#include <algorithm>

namespace aoa {

void forEachRowMajorChunk(const Box &box, int64_t maxElements,
                          llvm::function_ref<bool(const Box &chunk)> visit) {
  if (box.isEmpty())
    return;
  size_t rank = box.rank();
  if (rank == 0) {
    visit(box);
    return;
  }
  maxElements = std::max<int64_t>(maxElements, 1);
  // The block dimension: the first one whose trailing dimensions fit whole.
  size_t blockDim = rank - 1;
  int64_t inner = 1;
  while (blockDim > 0) {
    int64_t wider = inner * box.dim(blockDim).size();
    if (wider > maxElements)
      break;
    inner = wider;
    --blockDim;
  }
  int64_t blockSize = std::min(box.dim(blockDim).size(),
                               std::max<int64_t>(1, maxElements / inner));

  llvm::SmallVector<Interval, 4> chunk(box.dims().begin(), box.dims().end());
  for (size_t d = 0; d < blockDim; ++d)
    chunk[d] = Interval{box.dim(d).begin, box.dim(d).begin + 1};
  for (;;) {
    const Interval &block = box.dim(blockDim);
    for (int64_t begin = block.begin; begin < block.end; begin += blockSize) {
      chunk[blockDim] = Interval{begin, std::min(block.end, begin + blockSize)};
      if (!visit(Box(chunk)))
        return;
    }
    // Odometer over the leading (fixed) dimensions.
    size_t d = blockDim;
    while (d-- > 0) {
      if (++chunk[d].begin < box.dim(d).end) {
        chunk[d].end = chunk[d].begin + 1;
        break;
      }
      chunk[d] = Interval{box.dim(d).begin, box.dim(d).begin + 1};
    }
    if (d == size_t(-1))
      return;
  }
}

} // namespace aoa
