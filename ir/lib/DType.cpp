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
constexpr DTypeInfo kInfo[] = {
    {DType::F64, 8, "float64", "F64"},   {DType::F32, 4, "float32", "F32"},
    {DType::F16, 2, "float16", "F16"},   {DType::BF16, 2, "bfloat16", "BF16"},
    {DType::I64, 8, "int64", "I64"},     {DType::I32, 4, "int32", "I32"},
    {DType::I16, 2, "int16", "I16"},     {DType::I8, 1, "int8", "I8"},
    {DType::U8, 1, "uint8", "U8"},       {DType::Bool, 1, "bool", "BOOL"},
};
const DTypeInfo &info(DType dtype) { return kInfo[static_cast<size_t>(dtype)]; }
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

bool isFloatingDType(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

} // namespace aoa
