//===- DType.h - Element types of stored tensors ----------------*- C++ -*-===//
#ifndef AOA_IR_DTYPE_H
#define AOA_IR_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace aoa {

/// The element types safetensors can store and the metadata can name, one
/// byte or more each (docs/shard-metadata.md). The values index tables; new
/// dtypes go at the end.
///
///  - F8E4M3 and F8E5M2 are the OCP FP8 formats as PyTorch's
///    float8_e4m3fn (no infinities, NaN S.1111.111) and float8_e5m2
///    (IEEE-like); F8E8M0 is float8_e8m0fnu (2^(e-127), no sign, no zero,
///    0xFF is NaN), the MX block scale.
///  - F8E4M3Fnuz, F8E5M2Fnuz and C64 are "opaque": read, moved and written
///    as bytes, never cast (isCastableDType).
enum class DType : uint8_t {
  F64,
  F32,
  F16,
  BF16,
  I64,
  I32,
  I16,
  I8,
  U8,
  Bool,
  U64,
  U32,
  U16,
  F8E4M3,
  F8E5M2,
  F8E8M0,
  F8E4M3Fnuz,
  F8E5M2Fnuz,
  C64,
};

constexpr DType kAllDTypes[] = {
    DType::F64,    DType::F32,    DType::F16,        DType::BF16,
    DType::I64,    DType::I32,    DType::I16,        DType::I8,
    DType::U8,     DType::Bool,   DType::U64,        DType::U32,
    DType::U16,    DType::F8E4M3, DType::F8E5M2,     DType::F8E8M0,
    DType::F8E4M3Fnuz, DType::F8E5M2Fnuz, DType::C64};

/// Bytes per element.
size_t dtypeSize(DType dtype);
/// The most bytes an element of any dtype has.
constexpr size_t kLargestDTypeSize = 8;
/// The statements' and metadata's spelling (Paddle's and PyTorch's): float64
/// float32 float16 bfloat16 int64 int32 int16 int8 uint8 bool uint64 uint32
/// uint16 float8_e4m3fn float8_e5m2 float8_e8m0fnu float8_e4m3fnuz
/// float8_e5m2fnuz complex64.
std::string_view dtypeName(DType dtype);
/// The safetensors header spelling: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL
/// U64 U32 U16 F8_E4M3 F8_E5M2 F8_E8M0 F8_E4M3FNUZ F8_E5M2FNUZ C64.
std::string_view safetensorsDTypeName(DType dtype);
std::optional<DType> parseDTypeName(std::string_view name);
std::optional<DType> parseSafetensorsDTypeName(std::string_view name);
/// Every dtype name, "float64 float32 ... complex64", for hints.
std::string_view allDTypeNames();
/// Every castable dtype name, for hints.
std::string_view castableDTypeNames();

/// Floating dtypes: float64, float32, float16, bfloat16 and the three FP8
/// formats (not the opaque fnuz ones).
bool isFloatingDType(DType dtype);
/// Whether casts to and from `dtype` exist: every dtype but the opaque ones
/// (float8_e4m3fnuz, float8_e5m2fnuz, complex64), which are only moved.
bool isCastableDType(DType dtype);

/// A safetensors dtype aoa recognizes but cannot store: the sub-byte formats
/// F4 (4 bits), F6_E2M3 and F6_E3M2 (6 bits). Gives the bits per element;
/// nullopt for any other name.
std::optional<unsigned> subByteDTypeBits(std::string_view safetensorsName);
/// The same for the metadata spellings float4_e2m1fn, float6_e2m3fn and
/// float6_e3m2fn.
std::optional<unsigned> subByteDTypeBitsByName(std::string_view name);

} // namespace aoa

#endif // AOA_IR_DTYPE_H
