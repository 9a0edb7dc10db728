//===- SafetensorsHeader.h - A safetensors file header ----------*- C++ -*-===//
//
// A safetensors file (docs/runtime-storage.md) is
//
//   [8 bytes: N, little-endian u64] [N bytes: JSON header] [data section]
//
// with the header {NAME: {"dtype": "F32", "shape": [2, 3], "data_offsets":
// [BEGIN, END]}, ..., "__metadata__": {STRING: STRING}} ("__metadata__"
// optional). Offsets are relative to the data section; data is little-endian
// and row-major.
//
// This file holds the header's model, its validating parser, and its
// serializer. The serializer writes what the official Python/Rust library
// writes, byte for byte: "__metadata__" first, tensors in data order, compact
// JSON, padded with spaces to a multiple of 8 bytes so the data section (and,
// with the official tensor order, every tensor) is 8-byte aligned. (The one
// difference: the control characters \b, \f and \r in a string are written
// as \u0008, \u000c and \u000d, which is the same JSON.)
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_STORAGE_SAFETENSORSHEADER_H
#define AOA_RUNTIME_STORAGE_SAFETENSORSHEADER_H

#include "aoa/ir/DType.h"
#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aoa::runtime {

/// One tensor as the header describes it.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Byte range [dataBegin, dataEnd) within the data section.
  uint64_t dataBegin = 0;
  uint64_t dataEnd = 0;

  uint64_t byteSize() const { return dataEnd - dataBegin; }
  /// The product of the shape (1 for a scalar).
  int64_t elementCount() const;
};

/// The header's key/value strings, in header order.
using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

class SafetensorsHeader {
public:
  /// Appends a tensor; false (and no change) when its name is taken.
  bool addTensor(SafetensorsTensor tensor);
  void setMetadata(SafetensorsMetadata metadata) {
    metadata_ = std::move(metadata);
  }

  /// In header order.
  llvm::ArrayRef<SafetensorsTensor> tensors() const { return tensors_; }
  const SafetensorsMetadata &metadata() const { return metadata_; }

  /// The tensor called `name`, or null.
  const SafetensorsTensor *find(std::string_view name) const;
  /// The position of tensor `name` in tensors(), or nullopt.
  std::optional<size_t> indexOf(std::string_view name) const;

  /// The end of the last tensor's data: the smallest data section that holds
  /// every tensor.
  uint64_t dataSize() const;

private:
  std::vector<SafetensorsTensor> tensors_;
  llvm::StringMap<size_t> index_;
  SafetensorsMetadata metadata_;
};

/// Headers longer than this are refused as corrupt (the official library's
/// limit, 100 MB; a header takes about 100 bytes per tensor).
constexpr uint64_t kMaxSafetensorsHeaderSize = 100'000'000;

/// Parses and validates the JSON header text `json` (without the length
/// prefix) of a file whose data section holds `dataSize` bytes. Checks:
/// well-formed JSON object; for each tensor a known dtype, a shape of
/// non-negative integers, data_offsets [begin, end] with begin <= end <=
/// dataSize, end - begin == product(shape) * dtype size, no name twice, no two
/// tensors sharing bytes; "__metadata__" maps strings to strings. Unknown
/// fields in a tensor entry are ignored, as the official library does.
/// `fileName` names the file in error messages.
Expected<SafetensorsHeader> parseSafetensorsHeader(std::string_view json,
                                                   uint64_t dataSize,
                                                   std::string_view fileName);

/// The header text the official library writes for `header`, padded with
/// spaces to a multiple of 8 bytes. Tensors are written in tensors() order
/// (the official writer's is data order), metadata first when there is any.
std::string serializeSafetensorsHeader(const SafetensorsHeader &header);

/// The 8-byte little-endian length prefix for a header of `size` bytes.
std::string encodeSafetensorsHeaderLength(uint64_t size);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_STORAGE_SAFETENSORSHEADER_H
