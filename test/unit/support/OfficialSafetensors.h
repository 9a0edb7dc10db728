//===- OfficialSafetensors.h - Official library output ----------*- C++ -*-===//
//
// Byte-exact safetensors files as the official Rust/Python library writes
// them, copied from its own tests (safetensors/src/tensor.rs). The reader
// must read them and the writer must reproduce them; neither side's
// correctness then rests on the other's.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_OFFICIALSAFETENSORS_H
#define AOA_TEST_UNIT_OFFICIALSAFETENSORS_H

#include <initializer_list>
#include <string>

namespace aoa::test {

inline std::string bytesOf(std::initializer_list<int> values) {
  std::string bytes;
  for (int v : values)
    bytes += static_cast<char>(v);
  return bytes;
}

/// float32 0, 1, 2, 3, 4, 5 in little-endian bytes.
inline std::string officialZeroToFive() {
  return bytesOf({0, 0, 0,  0,  0, 0, 128, 63, 0, 0, 0,   64,
                  0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64});
}

/// {"attn.0": F32 [1, 2, 3] holding 0..5} (test_serialization); the JSON is
/// 64 bytes, so there is no padding.
inline std::string officialAttnFile() {
  return bytesOf({64, 0, 0, 0, 0, 0, 0, 0}) +
         R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})" +
         officialZeroToFive();
}

/// {"attn0": F32 [1, 1, 2, 3]}: 65 bytes of JSON padded with 7 spaces
/// (test_serialization_forced_alignement).
inline std::string officialPaddedFile() {
  return bytesOf({72, 0, 0, 0, 0, 0, 0, 0}) +
         R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],)"
         R"("data_offsets":[0,24]}})" +
         "       " + officialZeroToFive();
}

/// No tensors at all (test_empty).
inline std::string officialEmptyFile() {
  return bytesOf({8, 0, 0, 0, 0, 0, 0, 0}) + "{}      ";
}

/// No tensors, metadata {"framework": "pt"} (test_empty).
inline std::string officialMetadataOnlyFile() {
  return bytesOf({40, 0, 0, 0, 0, 0, 0, 0}) +
         R"({"__metadata__":{"framework":"pt"}})" + "     ";
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_OFFICIALSAFETENSORS_H
