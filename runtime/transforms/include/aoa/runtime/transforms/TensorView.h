//===- TensorView.h - A dense row-major tensor in memory --------*- C++ -*-===//
//
// A view names caller-owned memory as a tensor: a pointer, how many bytes are
// there, the dtype, and the shape (row-major, last dimension fastest). Views
// own nothing but their shape, so they are cheap to make per operation and
// cannot dangle on a temporary shape list.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_TENSORVIEW_H
#define AOA_RUNTIME_TRANSFORMS_TENSORVIEW_H

#include "aoa/ir/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>

namespace aoa::runtime {

/// A read-only tensor.
struct TensorView {
  const void *data = nullptr;
  /// Bytes available at `data`; at least the shape's volume times the dtype
  /// size for the view to be usable.
  size_t byteSize = 0;
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;

  TensorView() = default;
  TensorView(const void *data, size_t byteSize, DType dtype,
             llvm::ArrayRef<int64_t> shape)
      : data(data), byteSize(byteSize), dtype(dtype),
        shape(shape.begin(), shape.end()) {}
};

/// A writable tensor.
struct MutableTensorView {
  void *data = nullptr;
  size_t byteSize = 0;
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;

  MutableTensorView() = default;
  MutableTensorView(void *data, size_t byteSize, DType dtype,
                    llvm::ArrayRef<int64_t> shape)
      : data(data), byteSize(byteSize), dtype(dtype),
        shape(shape.begin(), shape.end()) {}

  operator TensorView() const {
    return TensorView(data, byteSize, dtype, shape);
  }
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_TENSORVIEW_H
