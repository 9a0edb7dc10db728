//===- FuzzSafetensorsHeader.cpp - Fuzz target: safetensors headers -------===//
//
// The input is a whole safetensors file: the 8-byte little-endian header
// length, the JSON header, the data section. It is split as
// SafetensorsReader::open splits a file (same length checks), and the header
// is parsed and validated against the data section's size.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/SafetensorsHeader.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace aoa::runtime;
  if (size < 8)
    return 0;
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | data[i];
  if (headerSize > kMaxSafetensorsHeaderSize || headerSize > size - 8)
    return 0;
  std::string_view json(reinterpret_cast<const char *>(data) + 8, headerSize);
  Expected<SafetensorsHeader> header =
      parseSafetensorsHeader(json, size - 8 - headerSize, "fuzz.safetensors");
  if (header)
    (void)serializeSafetensorsHeader(*header);
  return 0;
}
