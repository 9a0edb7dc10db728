//===- DType.h - Element types of stored tensors ----------------*- C++ -*-===//
#ifndef AOA_IR_DTYPE_H
#define AOA_IR_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace aoa {

/// The element types safetensors can store and the metadata can name.
enum class DType : uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

constexpr DType kAllDTypes[] = {DType::F64, DType::F32, DType::F16,
                                DType::BF16, DType::I64, DType::I32,
                                DType::I16, DType::I8,  DType::U8,
                                DType::Bool};

/// Bytes per element.
size_t dtypeSize(DType dtype);
/// Paddle's spelling, used in metadata, statements and postprocess strings:
/// float64 float32 float16 bfloat16 int64 int32 int16 int8 uint8 bool.
std::string_view dtypeName(DType dtype);
/// The safetensors header spelling: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL.
std::string_view safetensorsDTypeName(DType dtype);
std::optional<DType> parseDTypeName(std::string_view name);
std::optional<DType> parseSafetensorsDTypeName(std::string_view name);
/// Casts are defined between floating types only.
bool isFloatingDType(DType dtype);

} // namespace aoa

#endif // AOA_IR_DTYPE_H
