//===- SampleCheckpoint.h - Files for docs/plan-format.md's plan -*- C++ -*-===//
//
// The source files the documented sample plan (SamplePlanText.h) reads, with
// values chosen so that every destination value is known exactly, and those
// destination values: the executor tests of every backend run the sample
// plan on them and compare element by element.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_SAMPLECHECKPOINT_H
#define AOA_TEST_UNIT_SAMPLECHECKPOINT_H

#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"
#include "aoa/runtime/transforms/FloatConversion.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace aoa::test {

/// Source values: w[i][j] = 10 i + j (exact in bfloat16), m[e] = 0.5 e over
/// the flattening of the [4, 8] moment, q[e] = 100 + e, kc[e] = 200 + e.
float wValue(int i, int j) { return float(10 * i + j); }
float momentValue(int e) { return 0.5f * float(e); }

std::vector<uint8_t> bf16Bytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = runtime::floatToBFloat16(values[i]);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  return bytes;
}

std::vector<uint8_t> f32Bytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

struct TensorData {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

void writeFile(const std::string &path, const std::vector<TensorData> &tensors) {
  std::vector<runtime::TensorDeclaration> declarations;
  for (const TensorData &t : tensors)
    declarations.push_back({t.name, t.dtype, t.shape});
  runtime::Expected<runtime::SafetensorsWriter> writer =
      runtime::SafetensorsWriter::create(path, declarations);
  ASSERT_TRUE(writer.ok()) << writer.error().toString();
  for (const TensorData &t : tensors)
    ASSERT_TRUE(writer->writeTensor(t.name, t.bytes.data(), t.bytes.size()).ok());
  ASSERT_TRUE(writer->commit().ok());
}

/// The destination tensors of the sample, computed directly.
std::map<std::pair<std::string, std::string>, std::vector<float>>
expectedDestination() {
  std::map<std::pair<std::string, std::string>, std::vector<float>> expected;
  std::vector<float> wt(32);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j)
      wt[size_t(i * 8 + j)] = wValue(j, i); // wt = w^T
  expected[{"model-00001.safetensors", "wt"}] = wt;
  std::vector<float> low(16), high(16);
  for (int e = 0; e < 16; ++e) {
    low[size_t(e)] = momentValue(e);
    high[size_t(e)] = momentValue(16 + e);
  }
  expected[{"opt-rank0.safetensors", "m.moment1_0"}] = low;
  expected[{"opt-rank1.safetensors", "m.moment1_0"}] = high;
  std::vector<float> q(12), kc(12);
  for (int e = 0; e < 12; ++e) {
    q[size_t(e)] = float(100 + e);
    kc[size_t(e)] = float(200 + e);
  }
  expected[{"model-00002.safetensors", "qc"}] = q;
  expected[{"model-00002.safetensors", "kf"}] = kc;
  return expected;
}

/// Writes the sample's source files under `directory` (the plan's --src-dir).
inline void writeSampleSources(const std::string &directory) {
  std::filesystem::create_directories(directory + "/src");
  std::vector<float> wTop, wBottom, mLow, mHigh, q, kc;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      (i < 4 ? wTop : wBottom).push_back(wValue(i, j));
  for (int e = 0; e < 32; ++e)
    (e < 16 ? mLow : mHigh).push_back(momentValue(e));
  for (int e = 0; e < 12; ++e) {
    q.push_back(float(100 + e));
    kc.push_back(float(200 + e));
  }
  writeFile(directory + "/src/rank0.safetensors",
            {{"w", DType::BF16, {4, 4}, bf16Bytes(wTop)},
             {"m.moment1_0", DType::F32, {16}, f32Bytes(mHigh)}});
  writeFile(directory + "/src/rank1.safetensors",
            {{"w", DType::BF16, {4, 4}, bf16Bytes(wBottom)},
             {"m.moment1_0", DType::F32, {16}, f32Bytes(mLow)},
             {"q", DType::F32, {6, 2}, f32Bytes(q)},
             {"kc", DType::F32, {2, 2, 3}, f32Bytes(kc)}});
}

/// Every destination tensor of the sample in `directory` holds exactly the
/// expected values.
inline void expectSampleDestination(const std::string &directory) {
  for (const auto &[where, values] : expectedDestination()) {
    auto reader = runtime::SafetensorsReader::open(directory + "/" + where.first);
    ASSERT_TRUE(reader.ok()) << reader.error().toString();
    const runtime::SafetensorsTensor *tensor = reader->find(where.second);
    ASSERT_NE(tensor, nullptr) << where.second;
    std::vector<float> actual(size_t(tensor->elementCount()));
    ASSERT_EQ(tensor->byteSize(), actual.size() * 4);
    ASSERT_TRUE(
        reader->readTensor(*tensor, actual.data(), tensor->byteSize()).ok());
    EXPECT_EQ(actual, values) << where.first << ": " << where.second;
  }
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_SAMPLECHECKPOINT_H
