//===- ExpansionLimits.cpp ------------------------------------------------===//
#include "ExpansionLimits.h"

#include <algorithm>

namespace aoa {

std::optional<TensorType> storedKeyType(const KeySpace &keys,
                                        const Name &name) {
  if (!keys.present() || name.temporary || name.range || name.isPlaceholder())
    return std::nullopt;
  std::optional<TensorRef> tensor = keys.metadata()->find(name.text);
  if (!tensor)
    return std::nullopt;
  TensorType type;
  type.dtype = tensor->dtype();
  type.shape.assign(tensor->globalShape().begin(), tensor->globalShape().end());
  if (name.transposed)
    std::reverse(type.shape.begin(), type.shape.end());
  return type;
}

std::optional<size_t> normalizedAxis(int64_t axis, size_t rank) {
  int64_t normalized = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  if (normalized < 0 || normalized >= static_cast<int64_t>(rank))
    return std::nullopt;
  return static_cast<size_t>(normalized);
}

} // namespace aoa
