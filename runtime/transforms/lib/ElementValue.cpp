//===- ElementValue.cpp ---------------------------------------------------===//
#include "aoa/runtime/transforms/ElementValue.h"

#include "aoa/runtime/transforms/Float8Conversion.h"
#include "aoa/runtime/transforms/FloatConversion.h"

#include "aoa/runtime/support/Messages.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace aoa::runtime {

namespace {

template <typename T> T load(const void *element) {
  T value;
  std::memcpy(&value, element, sizeof(T));
  return value;
}

/// Shortest round-trip text of a float or double; NaNs with their bits.
template <typename Float, typename Bits>
std::string formatFloat(Float value, Bits bits) {
  if (std::isnan(value)) {
    std::string text = "nan (bits 0x";
    for (int shift = int(sizeof(Bits)) * 8 - 8; shift >= 0; shift -= 8)
      appendHexByte(text, static_cast<unsigned char>(bits >> shift));
    return text + ")";
  }
  char digits[64];
  std::to_chars_result result =
      std::to_chars(digits, digits + sizeof(digits), value);
  return std::string(digits, result.ptr);
}

/// The bytes of an element without a numeric value, "0x" and the bytes in
/// memory order as hex (a complex64 is its real float, then its imaginary).
std::string formatBytes(const void *element, size_t size) {
  std::string text = "0x";
  for (size_t i = 0; i < size; ++i)
    appendHexByte(text, static_cast<const unsigned char *>(element)[i]);
  return text;
}

} // namespace

double elementAsDouble(DType dtype, const void *element) {
  switch (dtype) {
  case DType::F64:
    return load<double>(element);
  case DType::F32:
    return load<float>(element);
  case DType::F16:
    return halfToFloat(load<uint16_t>(element));
  case DType::BF16:
    return bfloat16ToFloat(load<uint16_t>(element));
  case DType::I64:
    return static_cast<double>(load<int64_t>(element));
  case DType::I32:
    return load<int32_t>(element);
  case DType::I16:
    return load<int16_t>(element);
  case DType::I8:
    return load<int8_t>(element);
  case DType::U8:
    return load<uint8_t>(element);
  case DType::Bool:
    return load<uint8_t>(element) != 0 ? 1.0 : 0.0;
  case DType::U64:
    return static_cast<double>(load<uint64_t>(element));
  case DType::U32:
    return load<uint32_t>(element);
  case DType::U16:
    return load<uint16_t>(element);
  case DType::F8E4M3:
    return float8E4M3ToFloat(load<uint8_t>(element));
  case DType::F8E5M2:
    return float8E5M2ToFloat(load<uint8_t>(element));
  case DType::F8E8M0:
    return float8E8M0ToFloat(load<uint8_t>(element));
  case DType::F8E4M3Fnuz:
  case DType::F8E5M2Fnuz:
  case DType::C64:
    return std::nan(""); // opaque: no value
  }
  return 0;
}

std::string formatElement(DType dtype, const void *element) {
  switch (dtype) {
  case DType::F64:
    return formatFloat(load<double>(element), load<uint64_t>(element));
  case DType::F32:
    return formatFloat(load<float>(element), load<uint32_t>(element));
  case DType::F16:
    return formatFloat(halfToFloat(load<uint16_t>(element)),
                       load<uint16_t>(element));
  case DType::BF16:
    return formatFloat(bfloat16ToFloat(load<uint16_t>(element)),
                       load<uint16_t>(element));
  case DType::I64:
    return std::to_string(load<int64_t>(element));
  case DType::I32:
    return std::to_string(load<int32_t>(element));
  case DType::I16:
    return std::to_string(load<int16_t>(element));
  case DType::I8:
    return std::to_string(load<int8_t>(element));
  case DType::U8:
    return std::to_string(load<uint8_t>(element));
  case DType::Bool: {
    uint8_t byte = load<uint8_t>(element);
    if (byte <= 1)
      return byte ? "true" : "false";
    std::string text = "true (0x";
    appendHexByte(text, byte);
    return text + ")";
  }
  case DType::U64:
    return std::to_string(load<uint64_t>(element));
  case DType::U32:
    return std::to_string(load<uint32_t>(element));
  case DType::U16:
    return std::to_string(load<uint16_t>(element));
  case DType::F8E4M3:
    return formatFloat(float8E4M3ToFloat(load<uint8_t>(element)),
                       load<uint8_t>(element));
  case DType::F8E5M2:
    return formatFloat(float8E5M2ToFloat(load<uint8_t>(element)),
                       load<uint8_t>(element));
  case DType::F8E8M0:
    return formatFloat(float8E8M0ToFloat(load<uint8_t>(element)),
                       load<uint8_t>(element));
  case DType::F8E4M3Fnuz:
  case DType::F8E5M2Fnuz:
  case DType::C64:
    return formatBytes(element, dtypeSize(dtype));
  }
  return "?";
}

} // namespace aoa::runtime
