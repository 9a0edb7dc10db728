//===- TransformStagesTest.cpp - A copy's transform planned as stages -----===//
//
// The stages of the common transforms are checked one by one (what fuses,
// what composes, what forces an intermediate result), and random transforms
// run stage by stage as strided copies on the host (the nccl backend's
// emulated device) must give the bytes applyTransformSteps gives.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/transforms/StridedCopy.h"
#include "aoa/runtime/transforms/TransformStages.h"
#include "aoa/runtime/transforms/TransformSteps.h"

#include "RandomGeometry.h"
#include "SpecialValues.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <random>

using namespace aoa;
using namespace aoa::runtime;
using ::testing::ElementsAre;

namespace {

std::vector<plan::TransformStep> parse(const std::vector<std::string> &texts,
                                       size_t rank) {
  std::string why;
  std::optional<std::vector<plan::TransformStep>> steps =
      plan::parseTransformSteps(texts, rank, why);
  EXPECT_TRUE(steps) << why;
  return steps ? *steps : std::vector<plan::TransformStep>{};
}

/// The stages of `texts` on `inDtype` data of `inShape`, whose result must
/// be `outDtype` of `outShape`.
std::vector<TransformStage> stagesOf(const std::vector<std::string> &texts,
                                     DType inDtype,
                                     std::vector<int64_t> inShape,
                                     DType outDtype,
                                     std::vector<int64_t> outShape) {
  Expected<std::vector<TransformStage>> stages = planTransformStages(
      parse(texts, inShape.size()), inDtype, inShape, outDtype, outShape);
  EXPECT_TRUE(stages) << stages.error().toString();
  return stages ? *stages : std::vector<TransformStage>{};
}

std::vector<int64_t> axesOf(const Permutation &permutation) {
  return std::vector<int64_t>(permutation.axes().begin(),
                              permutation.axes().end());
}

TEST(TransformStages, APermutationIsOneStage) {
  std::vector<TransformStage> stages =
      stagesOf({"[1, 0]"}, DType::F32, {2, 3}, DType::F32, {3, 2});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_THAT(stages[0].inputShape, ElementsAre(2, 3));
  EXPECT_THAT(axesOf(stages[0].permutation), ElementsAre(1, 0));
  EXPECT_EQ(stages[0].from, DType::F32);
  EXPECT_EQ(stages[0].to, DType::F32);
  EXPECT_THAT(stages[0].outputShape(), ElementsAre(3, 2));
  EXPECT_EQ(stages[0].outputBytes(), 24u);
}

TEST(TransformStages, ACastIsOneStage) {
  std::vector<TransformStage> stages =
      stagesOf({"float16"}, DType::F32, {2, 3}, DType::F16, {2, 3});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_TRUE(stages[0].permutation.isIdentity());
  EXPECT_EQ(stages[0].from, DType::F32);
  EXPECT_EQ(stages[0].to, DType::F16);
  EXPECT_EQ(stages[0].outputBytes(), 12u);
}

TEST(TransformStages, APermutationAndACastFuse) {
  std::vector<TransformStage> stages = stagesOf(
      {"[2, 0, 1]", "float16"}, DType::BF16, {2, 3, 4}, DType::F16, {4, 2, 3});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_THAT(stages[0].inputShape, ElementsAre(2, 3, 4));
  EXPECT_THAT(axesOf(stages[0].permutation), ElementsAre(2, 0, 1));
  EXPECT_EQ(stages[0].from, DType::BF16);
  EXPECT_EQ(stages[0].to, DType::F16);
}

TEST(TransformStages, PermutationsCompose) {
  // A transpose twice is the identity: one plain copy.
  std::vector<TransformStage> stages =
      stagesOf({"[1, 0]", "[1, 0]"}, DType::F32, {2, 3}, DType::F32, {2, 3});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_TRUE(stages[0].permutation.isIdentity());
  // Around a cast: "[1, 2, 0]" then "[1, 2, 0]" is "[2, 0, 1]".
  stages = stagesOf({"[1, 2, 0]", "float64", "[1, 2, 0]"}, DType::F32,
                    {2, 3, 4}, DType::F64, {4, 2, 3});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_THAT(axesOf(stages[0].permutation), ElementsAre(2, 0, 1));
  EXPECT_EQ(stages[0].to, DType::F64);
}

TEST(TransformStages, NoStepsIsOneIdentityStage) {
  std::vector<TransformStage> stages =
      stagesOf({}, DType::I8, {5}, DType::I8, {5});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_TRUE(stages[0].permutation.isIdentity());
  EXPECT_EQ(stages[0].from, DType::I8);
  EXPECT_EQ(stages[0].to, DType::I8);
  EXPECT_THAT(stages[0].inputShape, ElementsAre(5));
}

TEST(TransformStages, CastChainsRoundAtEveryStep) {
  std::vector<TransformStage> stages =
      stagesOf({"float16", "float32"}, DType::F32, {4}, DType::F32, {4});
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].from, DType::F32);
  EXPECT_EQ(stages[0].to, DType::F16);
  EXPECT_EQ(stages[1].from, DType::F16);
  EXPECT_EQ(stages[1].to, DType::F32);
  // The permutation goes with the first cast; the second stage only casts.
  stages = stagesOf({"[1, 0]", "float16", "bfloat16"}, DType::F32, {2, 3},
                    DType::BF16, {3, 2});
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_THAT(axesOf(stages[0].permutation), ElementsAre(1, 0));
  EXPECT_EQ(stages[0].to, DType::F16);
  EXPECT_THAT(stages[1].inputShape, ElementsAre(3, 2));
  EXPECT_TRUE(stages[1].permutation.isIdentity());
  EXPECT_EQ(stages[1].from, DType::F16);
  EXPECT_EQ(stages[1].to, DType::BF16);
  EXPECT_EQ(stages[0].outputBytes(), 12u);
}

TEST(TransformStages, AReshapeAfterAPermutationEndsTheStage) {
  // [4, 3] -> "[1, 0]" -> [3, 4] -> "reshape:[1, 3, 2, 2]" -> [1, 3, 2, 2]
  // -> "[0, 1, 3, 2]".
  std::vector<TransformStage> stages =
      stagesOf({"[1, 0]", "reshape:[1, 3, 2, 2]", "[0, 1, 3, 2]"}, DType::F32,
               {4, 3}, DType::F32, {1, 3, 2, 2});
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_THAT(stages[0].inputShape, ElementsAre(4, 3));
  EXPECT_THAT(axesOf(stages[0].permutation), ElementsAre(1, 0));
  EXPECT_THAT(stages[1].inputShape, ElementsAre(1, 3, 2, 2));
  EXPECT_THAT(axesOf(stages[1].permutation), ElementsAre(0, 1, 3, 2));
}

TEST(TransformStages, AReshapeAloneOnlyRelabels) {
  // The cast stays pending across the reshape: one stage over the new shape.
  std::vector<TransformStage> stages =
      stagesOf({"float16", "flatten:[2, 3, 4]"}, DType::F32, {2, 3, 4},
               DType::F16, {6, 4});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_THAT(stages[0].inputShape, ElementsAre(6, 4));
  EXPECT_TRUE(stages[0].permutation.isIdentity());
  EXPECT_EQ(stages[0].to, DType::F16);
}

TEST(TransformStages, ErrorsAreApplyTransformStepsErrors) {
  struct Case {
    std::vector<std::string> steps;
    DType inDtype;
    std::vector<int64_t> inShape;
    DType outDtype;
    std::vector<int64_t> outShape;
    const char *message;
  };
  for (const Case &c : {
           Case{{"[1, 0]"},
                DType::F32,
                {2, 3},
                DType::F32,
                {2, 3},
                "copy: the transform gives float32[3, 2] but the output "
                "buffer is float32[2, 3]"},
           Case{{"reshape:[1, 4, 3]"},
                DType::F32,
                {6, 2},
                DType::F32,
                {1, 4, 3},
                "copy: 'reshape:[1, 4, 3]' does not apply to data of shape "
                "[6, 2]"},
       }) {
    std::vector<plan::TransformStep> steps = parse(c.steps, c.inShape.size());
    Expected<std::vector<TransformStage>> stages = planTransformStages(
        steps, c.inDtype, c.inShape, c.outDtype, c.outShape);
    ASSERT_FALSE(stages);
    EXPECT_EQ(stages.error().message, c.message);
    std::vector<unsigned char> in(64), out(64);
    Status applied = applyTransformSteps(
        steps, TensorView(in.data(), in.size(), c.inDtype, c.inShape),
        MutableTensorView(out.data(), out.size(), c.outDtype, c.outShape));
    ASSERT_FALSE(applied);
    EXPECT_EQ(applied.error().toString(), stages.error().toString());
  }
}

/// Runs `stages` on `input` as strided copies on the host, through
/// temporaries, into `output`.
void runStagesOnHost(llvm::ArrayRef<TransformStage> stages,
                     const std::vector<unsigned char> &input,
                     std::vector<unsigned char> &output) {
  std::vector<unsigned char> current = input, next;
  for (size_t i = 0; i < stages.size(); ++i) {
    const TransformStage &stage = stages[i];
    bool last = i + 1 == stages.size();
    std::vector<unsigned char> &target = last ? output : next;
    if (!last)
      target.assign(stage.outputBytes(), 0);
    ASSERT_EQ(target.size(), stage.outputBytes());
    Box whole = Box::fromShape(stage.inputShape);
    Expected<StridedCopy> copy =
        describeRegionCopy(TensorView(current.data(), current.size(),
                                      stage.from, stage.inputShape),
                           whole,
                           MutableTensorView(target.data(), target.size(),
                                             stage.to, stage.outputShape()),
                           stage.permutation.apply(whole), stage.permutation);
    ASSERT_TRUE(copy) << copy.error().toString();
    runStridedCopyOnHost(*copy);
    if (!last)
      current.swap(next);
  }
}

int64_t volumeOf(llvm::ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// The divisors of `n`.
std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> result;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      result.push_back(d);
  return result;
}

TEST(TransformStages, RandomTransformsMatchApplyTransformSteps) {
  std::mt19937_64 rng(424242);
  const DType floating[] = {DType::F64, DType::F32, DType::F16, DType::BF16};
  for (int trial = 0; trial < 1500 && !HasFailure(); ++trial) {
    size_t rank = 1 + rng() % 4;
    std::vector<int64_t> inShape;
    for (size_t i = 0; i < rank; ++i)
      inShape.push_back(1 + int64_t(rng() % (rng() % 4 == 0 ? 40 : 6)));
    bool floats = rng() % 5 != 0;
    DType inDtype = floats ? floating[rng() % 4]
                           : kAllDTypes[rng() % std::size(kAllDTypes)];
    // Random steps, tracking the shape and dtype they give.
    std::vector<plan::TransformStep> steps;
    std::vector<int64_t> shape = inShape;
    DType dtype = inDtype;
    std::string text;
    size_t count = rng() % 6;
    for (size_t s = 0; s < count; ++s) {
      plan::TransformStep step;
      unsigned kind = unsigned(rng() % 4);
      if (kind == 1 && isFloatingDType(dtype)) {
        step.kind = plan::TransformStep::Kind::Cast;
        step.dtype = dtype = floating[rng() % 4];
      } else if (kind == 2 && shape.size() >= 3) {
        // Flatten [N, a, b, ...] to [N * a, b * ...].
        step.kind = plan::TransformStep::Kind::Flatten;
        step.canonical = shape;
        shape = {shape[0] * shape[1],
                 volumeOf(llvm::ArrayRef<int64_t>(shape).drop_front(2))};
      } else if (kind == 3 && shape.size() == 2) {
        // Reshape [R, C] to [R / f, f, g, C / g].
        std::vector<int64_t> fs = divisors(shape[0]), gs = divisors(shape[1]);
        int64_t f = fs[rng() % fs.size()], g = gs[rng() % gs.size()];
        step.kind = plan::TransformStep::Kind::Reshape;
        step.canonical = {shape[0] / f, f, g, shape[1] / g};
        shape = {shape[0] / f, f, g, shape[1] / g};
      } else {
        step.kind = plan::TransformStep::Kind::Permute;
        step.permutation = test::randomPermutation(rng, shape.size());
        shape = step.permutation.apply(llvm::ArrayRef<int64_t>(shape));
      }
      text += step.text() + " ";
      steps.push_back(std::move(step));
    }

    std::vector<unsigned char> input(size_t(volumeOf(inShape)) *
                                     dtypeSize(inDtype));
    test::fillSpecialElements(inDtype, input.data(), size_t(volumeOf(inShape)),
                              rng);
    size_t outBytes = size_t(volumeOf(shape)) * dtypeSize(dtype);
    std::vector<unsigned char> expected(outBytes, 0x5A), actual(outBytes, 0x5A);
    Status applied = applyTransformSteps(
        steps, TensorView(input.data(), input.size(), inDtype, inShape),
        MutableTensorView(expected.data(), expected.size(), dtype, shape));
    ASSERT_TRUE(applied) << text << applied.error().toString();
    Expected<std::vector<TransformStage>> stages =
        planTransformStages(steps, inDtype, inShape, dtype, shape);
    ASSERT_TRUE(stages) << text << stages.error().toString();
    runStagesOnHost(*stages, input, actual);
    ASSERT_TRUE(actual == expected)
        << "trial " << trial << ": " << dtypeName(inDtype)
        << formatShape(inShape) << " " << text;
  }
}

} // namespace
