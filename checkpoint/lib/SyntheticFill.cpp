//===- SyntheticFill.cpp --------------------------------------------------===//
#include "aoa/checkpoint/SyntheticFill.h"

#include "aoa/runtime/storage/StoredRegion.h"
#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/transforms/Float8Conversion.h"
#include "aoa/runtime/transforms/FloatConversion.h"

#include "aoa/runtime/support/Messages.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace aoa::checkpoint {

using namespace runtime;

namespace {

/// splitmix64's finalizer: a bijection that spreads every input bit.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebu;
  x ^= x >> 31;
  return x;
}

/// Significand bits (with the implicit one) of a floating dtype; 0 for the
/// others (float8_e8m0fnu, which holds powers of two only, among them).
int significandBits(DType dtype) {
  switch (dtype) {
  case DType::F8E4M3:
    return 4;
  case DType::F8E5M2:
    return 3;
  case DType::F64:
    return 53;
  case DType::F32:
    return 24;
  case DType::F16:
    return 11;
  case DType::BF16:
    return 8;
  default:
    return 0;
  }
}

/// Stores `value` (exact, or rounded to nearest for iota) as `dtype`.
void storeFloat(DType dtype, double value, std::byte *at) {
  switch (dtype) {
  case DType::F64:
    std::memcpy(at, &value, 8);
    return;
  case DType::F32: {
    float narrow = static_cast<float>(value);
    std::memcpy(at, &narrow, 4);
    return;
  }
  case DType::F16: {
    uint16_t bits = doubleToHalf(value);
    std::memcpy(at, &bits, 2);
    return;
  }
  case DType::BF16: {
    uint16_t bits = doubleToBFloat16(value);
    std::memcpy(at, &bits, 2);
    return;
  }
  case DType::F8E4M3: {
    uint8_t bits = floatToFloat8E4M3(static_cast<float>(value));
    std::memcpy(at, &bits, 1);
    return;
  }
  case DType::F8E5M2: {
    uint8_t bits = floatToFloat8E5M2(static_cast<float>(value));
    std::memcpy(at, &bits, 1);
    return;
  }
  case DType::F8E8M0: {
    uint8_t bits = floatToFloat8E8M0(static_cast<float>(value));
    std::memcpy(at, &bits, 1);
    return;
  }
  default:
    return;
  }
}

/// The low dtypeSize bytes of `bits` (little-endian): the two's complement
/// value wrapped to the width; bool keeps the lowest bit only; a random
/// float8_e8m0fnu is one of its 255 numbers (never the NaN 0xFF).
void storeInteger(DType dtype, uint64_t bits, std::byte *at) {
  if (dtype == DType::Bool)
    bits &= 1;
  if (dtype == DType::F8E8M0)
    bits %= 255;
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<unsigned char>(bits >> (8 * i));
  std::memcpy(at, bytes, dtypeSize(dtype));
}

} // namespace

std::string SyntheticFill::toString() const {
  if (kind == Kind::Iota)
    return "iota";
  return "random:" + std::to_string(seed);
}

Expected<SyntheticFill> parseSyntheticFill(std::string_view text) {
  const char *hint = "a fill is 'random', 'random:SEED' (SEED a decimal "
                     "integer, 0 to 18446744073709551615) or 'iota'";
  SyntheticFill fill;
  if (text == "iota") {
    fill.kind = SyntheticFill::Kind::Iota;
    return fill;
  }
  if (text == "random")
    return fill;
  constexpr std::string_view kRandom = "random:";
  if (text.substr(0, kRandom.size()) == kRandom) {
    std::string_view digits = text.substr(kRandom.size());
    const char *end = digits.data() + digits.size();
    std::from_chars_result parsed =
        std::from_chars(digits.data(), end, fill.seed);
    if (!digits.empty() && parsed.ec == std::errc() && parsed.ptr == end)
      return fill;
    return Error{"bad seed " + quoteName(digits) + " in the fill " +
                     quoteName(text),
                 hint};
  }
  return Error{"unknown fill " + quoteName(text), hint};
}

Status fillSynthetic(const SyntheticFill &fill, std::string_view key,
                     DType dtype, llvm::ArrayRef<int64_t> globalShape,
                     const Box &region, void *buffer, size_t bufferSize) {
  size_t elementSize = dtypeSize(dtype);
  Box whole = Box::fromShape(globalShape);
  if (region.rank() != whole.rank() || !whole.contains(region))
    return Error{"key " + quoteName(key) + ": region " + region.toString() +
                     " is not inside its global shape " +
                     formatExtents(globalShape),
                 "ask for elements inside the key"};
  if (bufferSize != uint64_t(region.volume()) * elementSize)
    return Error{"key " + quoteName(key) + ": a buffer of " +
                     std::to_string(bufferSize) + " bytes for region " +
                     region.toString(),
                 "size the buffer as the region's volume times the dtype size"};

  uint64_t keyHash = mix(contentHash(key.data(), key.size()) ^ mix(fill.seed));
  int bits = significandBits(dtype);
  bool floating = bits != 0;
  bool powersOfTwo = dtype == DType::F8E8M0;
  double scale = floating ? std::ldexp(1.0, -(bits - 1)) : 0;
  int64_t half = floating ? int64_t(1) << (bits - 1) : 0;
  auto *out = static_cast<std::byte *>(buffer);
  return forEachStoredRun(
      whole, std::nullopt, region, [&](const StoredRun &run) {
        std::byte *at = out + run.regionOffset * elementSize;
        for (int64_t j = 0; j < run.count; ++j, at += elementSize) {
          uint64_t index = uint64_t(run.storedOffset + j);
          if (fill.kind == SyntheticFill::Kind::Iota) {
            if (floating || powersOfTwo)
              storeFloat(dtype, double(index), at);
            else
              storeInteger(dtype, index, at);
            continue;
          }
          uint64_t hash = mix(keyHash + index * 0x9e3779b97f4a7c15u);
          if (floating)
            storeFloat(dtype,
                       double(int64_t(hash >> (64 - bits)) - half) * scale, at);
          else
            storeInteger(dtype, hash, at);
        }
        return true;
      });
}

} // namespace aoa::checkpoint
