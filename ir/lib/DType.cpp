//===- DType.cpp -----------------------------------------------------------===//
#include "aoa/ir/DType.h"

namespace aoa {

namespace {
struct DTypeInfo {
  DType dtype;
  size_t size;
  std::string_view name;
  std::string_view safetensorsName;
};
/// Indexed by the enum's value.
constexpr DTypeInfo kInfo[] = {
    {DType::F64, 8, "float64", "F64"},
    {DType::F32, 4, "float32", "F32"},
    {DType::F16, 2, "float16", "F16"},
    {DType::BF16, 2, "bfloat16", "BF16"},
    {DType::I64, 8, "int64", "I64"},
    {DType::I32, 4, "int32", "I32"},
    {DType::I16, 2, "int16", "I16"},
    {DType::I8, 1, "int8", "I8"},
    {DType::U8, 1, "uint8", "U8"},
    {DType::Bool, 1, "bool", "BOOL"},
    {DType::U64, 8, "uint64", "U64"},
    {DType::U32, 4, "uint32", "U32"},
    {DType::U16, 2, "uint16", "U16"},
    {DType::F8E4M3, 1, "float8_e4m3fn", "F8_E4M3"},
    {DType::F8E5M2, 1, "float8_e5m2", "F8_E5M2"},
    {DType::F8E8M0, 1, "float8_e8m0fnu", "F8_E8M0"},
    {DType::F8E4M3Fnuz, 1, "float8_e4m3fnuz", "F8_E4M3FNUZ"},
    {DType::F8E5M2Fnuz, 1, "float8_e5m2fnuz", "F8_E5M2FNUZ"},
    {DType::C64, 8, "complex64", "C64"},
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) ==
                  sizeof(kAllDTypes) / sizeof(kAllDTypes[0]),
              "every dtype has its entry");
constexpr bool noneLargerThan(size_t size) {
  for (const DTypeInfo &i : kInfo)
    if (i.size > size)
      return false;
  return true;
}
static_assert(noneLargerThan(kLargestDTypeSize),
              "kLargestDTypeSize is the largest");
const DTypeInfo &info(DType dtype) { return kInfo[static_cast<size_t>(dtype)]; }

struct SubByteInfo {
  std::string_view safetensorsName;
  std::string_view name;
  unsigned bits;
};
constexpr SubByteInfo kSubByte[] = {{"F4", "float4_e2m1fn", 4},
                                    {"F6_E2M3", "float6_e2m3fn", 6},
                                    {"F6_E3M2", "float6_e3m2fn", 6}};
} // namespace

size_t dtypeSize(DType dtype) { return info(dtype).size; }
std::string_view dtypeName(DType dtype) { return info(dtype).name; }
std::string_view safetensorsDTypeName(DType dtype) {
  return info(dtype).safetensorsName;
}

std::optional<DType> parseDTypeName(std::string_view name) {
  for (const DTypeInfo &i : kInfo)
    if (i.name == name)
      return i.dtype;
  return std::nullopt;
}

std::optional<DType> parseSafetensorsDTypeName(std::string_view name) {
  for (const DTypeInfo &i : kInfo)
    if (i.safetensorsName == name)
      return i.dtype;
  return std::nullopt;
}

std::string_view allDTypeNames() {
  return "float64 float32 float16 bfloat16 float8_e4m3fn float8_e5m2 "
         "float8_e8m0fnu int64 int32 int16 int8 uint64 uint32 uint16 uint8 "
         "bool float8_e4m3fnuz float8_e5m2fnuz complex64";
}

std::string_view castableDTypeNames() {
  return "float64 float32 float16 bfloat16 float8_e4m3fn float8_e5m2 "
         "float8_e8m0fnu int64 int32 int16 int8 uint64 uint32 uint16 uint8 "
         "bool";
}

bool isFloatingDType(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::F8E4M3:
  case DType::F8E5M2:
  case DType::F8E8M0:
    return true;
  default:
    return false;
  }
}

bool isCastableDType(DType dtype) {
  return dtype != DType::F8E4M3Fnuz && dtype != DType::F8E5M2Fnuz &&
         dtype != DType::C64;
}

std::optional<unsigned> subByteDTypeBits(std::string_view safetensorsName) {
  for (const SubByteInfo &i : kSubByte)
    if (i.safetensorsName == safetensorsName)
      return i.bits;
  return std::nullopt;
}

std::optional<unsigned> subByteDTypeBitsByName(std::string_view name) {
  for (const SubByteInfo &i : kSubByte)
    if (i.name == name)
      return i.bits;
  return std::nullopt;
}

} // namespace aoa
