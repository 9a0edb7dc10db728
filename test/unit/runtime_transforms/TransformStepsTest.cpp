//===- TransformStepsTest.cpp - A plan's copy transforms on real data -----===//
//
// Each transform is checked element by element against a direct model:
// permutations index the input, reshape/flatten keep the row-major order,
// and a cast chain rounds at every step (float32 -> float16 -> float32 must
// lose what float16 cannot hold, as in the reference).
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/FloatConversion.h"
#include "aoa/runtime/transforms/TransformSteps.h"

#include <gtest/gtest.h>

#include <numeric>

namespace aoa::runtime {
namespace {

std::vector<plan::TransformStep> parse(const std::vector<std::string> &texts,
                                       size_t rank) {
  std::string why;
  std::optional<std::vector<plan::TransformStep>> steps =
      plan::parseTransformSteps(texts, rank, why);
  EXPECT_TRUE(steps) << why;
  return steps ? *steps : std::vector<plan::TransformStep>{};
}

TEST(TransformSteps, PermutationAndCastFuse) {
  // in[2][3][4] = i*12 + j*4 + k; "[2, 0, 1]" gives out[k][i][j].
  std::vector<float> in(24);
  std::iota(in.begin(), in.end(), 0.0f);
  std::vector<double> out(24);
  Status status = applyTransformSteps(
      parse({"[2, 0, 1]", "float64"}, 3),
      TensorView(in.data(), 96, DType::F32, {2, 3, 4}),
      MutableTensorView(out.data(), 192, DType::F64, {4, 2, 3}));
  ASSERT_TRUE(status.ok()) << status.error().toString();
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(out[size_t(k * 6 + i * 3 + j)], double(i * 12 + j * 4 + k));
}

TEST(TransformSteps, ConsecutivePermutationsCompose) {
  std::vector<float> in(6);
  std::iota(in.begin(), in.end(), 0.0f);
  std::vector<float> out(6);
  // Transposing twice is the identity.
  ASSERT_TRUE(applyTransformSteps(parse({"[1, 0]", "[1, 0]"}, 2),
                                  TensorView(in.data(), 24, DType::F32, {2, 3}),
                                  MutableTensorView(out.data(), 24, DType::F32,
                                                    {2, 3}))
                  .ok());
  EXPECT_EQ(out, in);
}

TEST(TransformSteps, ACastChainRoundsAtEveryStep) {
  // 1 + 2^-12 is a float32 but not a float16: the chain must round it to 1.
  std::vector<float> in{1.0f + 1.0f / 4096, 3.0f, -0.0f, 65520.0f};
  std::vector<float> out(4);
  ASSERT_TRUE(applyTransformSteps(parse({"float16", "float32"}, 1),
                                  TensorView(in.data(), 16, DType::F32, {4}),
                                  MutableTensorView(out.data(), 16, DType::F32,
                                                    {4}))
                  .ok());
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 3.0f);
  EXPECT_TRUE(std::signbit(out[2]));
  EXPECT_TRUE(std::isinf(out[3])); // rounds past float16's largest value
}

TEST(TransformSteps, AReshapeBetweenPermutationsSeesThePermutedOrder) {
  // in: [4, 3] = iota. "[1, 0]" -> [3, 4]; "reshape:[2, 3, 2]" needs rows as
  // a multiple of 3: [3, 4] -> [1, 3, 2, 2]; then "[0, 1, 3, 2]".
  std::vector<float> in(12);
  std::iota(in.begin(), in.end(), 0.0f);
  std::vector<float> out(12);
  Status status = applyTransformSteps(
      parse({"[1, 0]", "reshape:[1, 3, 2, 2]", "[0, 1, 3, 2]"}, 2),
      TensorView(in.data(), 48, DType::F32, {4, 3}),
      MutableTensorView(out.data(), 48, DType::F32, {1, 3, 2, 2}));
  ASSERT_TRUE(status.ok()) << status.error().toString();
  // t = in^T: t[r][c] = in[c][r] = 3c + r, viewed as [1, 3, 2, 2]:
  // v[0][r][a][b] = t[r][2a + b]; the last permutation swaps a and b.
  for (int r = 0; r < 3; ++r)
    for (int b = 0; b < 2; ++b)
      for (int a = 0; a < 2; ++a)
        EXPECT_EQ(out[size_t(r * 4 + b * 2 + a)], float(3 * (2 * a + b) + r));
}

TEST(TransformSteps, MismatchedOutputsAreErrors) {
  std::vector<float> in(6), out(6);
  Status status = applyTransformSteps(
      parse({"[1, 0]"}, 2), TensorView(in.data(), 24, DType::F32, {2, 3}),
      MutableTensorView(out.data(), 24, DType::F32, {2, 3}));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("gives float32[3, 2] but the output "
                                        "buffer is float32[2, 3]"),
            std::string::npos)
      << status.error().message;
}

} // namespace
} // namespace aoa::runtime
