//===- VerifyTransfersTest.cpp - The verify pass over damaged transfers ---===//
//
// The verify pass checks the transfers resolve-shard-sources made: every
// element of every destination tensor written exactly once. Resolved
// conversions never fail it, so these transfers are made by hand, damaged
// in six of 40,000 tensors (80,000 transfers: more than one of the pass's
// batches of 32,768 checks on each side), and the pass must name each, the
// transfers' problems in transfer order, then the tensors' in tensor order,
// whatever the thread count.
//
//===----------------------------------------------------------------------===//
#include "CapturedDiagnostics.h"

#include "aoa/passes/CompilationState.h"
#include "aoa/passes/Passes.h"

#include <gtest/gtest.h>

using namespace aoa;

namespace {

constexpr uint32_t kTensors = 40000;

/// Tensor t (float32 [2, 4]) gets two row transfers from the source; tensor
/// `gap` loses its second, tensor `twice` gets its first row twice.
void buildTransfers(CompilationState &state, uint32_t gap, uint32_t twice) {
  plan::Plan &plan = state.plan;
  plan.ranks = 1;
  plan.sourceFiles = {{"s.safetensors", 0, std::nullopt}};
  plan.destinationFiles = {{"d.safetensors", 0, std::nullopt}};
  plan::StoredTensor source;
  source.name = source.key = "w";
  source.globalShape = {2, 4};
  source.box = Box({0, 0}, {2, 4});
  plan.sourceTensors = {source};
  for (uint32_t t = 0; t < kTensors; ++t) {
    plan::StoredTensor destination = source;
    destination.name = destination.key = "t" + std::to_string(t);
    plan.destinationTensors.push_back(destination);
    for (int64_t row = 0; row < 2; ++row) {
      if (t == gap && row == 1)
        continue;
      int64_t written = t == twice ? 0 : row;
      Transfer transfer;
      transfer.sourceRegion = Box({row, 0}, {1, 4});
      transfer.destinationTensor = t;
      transfer.destinationRegion = Box({written, 0}, {1, 4});
      state.transfers.push_back(transfer);
    }
  }
}

std::vector<std::string> verify(unsigned threads) {
  test::CapturedDiagnostics captured;
  CompilationState state(captured.sources, captured.diags);
  state.threads = threads;
  buildTransfers(state, 3, 9000);
  plan::StoredTensor &fifth = state.plan.destinationTensors[5000];
  fifth.globalShape = {3, 4}; // stores a third row nothing writes
  fifth.box = Box({0, 0}, {3, 4});
  // Tensor 100's second transfer (index 200: tensor 3 has one) reads past
  // the source's rows; tensor 35000 is float16, which the float32 source
  // does not become; tensor 36000's second transfer writes below its box.
  state.transfers[200].sourceRegion = Box({1, 0}, {2, 4});
  state.plan.destinationTensors[35000].dtype = DType::F16;
  state.transfers[72000].destinationRegion = Box({2, 0}, {1, 4});
  createVerifyPass()->run(state);
  std::vector<std::string> messages;
  for (size_t i = 0; i < captured.diagnostics.size(); ++i)
    messages.push_back(captured.message(i));
  return messages;
}

TEST(VerifyTransfersTest, NamesEachDamagedTensorInOrderOnAnyThreadCount) {
  std::vector<std::string> expected = {
      "reads w[1:3, 0:4] from 's.safetensors', which stores only w[0:2, 0:4]",
      "'t35000' is float16 but its source 'w' arrives as float32",
      "'t35000' is float16 but its source 'w' arrives as float32",
      "writes t36000[2:3, 0:4] into 'd.safetensors', which stores only "
      "t36000[0:2, 0:4]",
      "t3[0:2, 0:4] in 'd.safetensors': 4 of its 8 elements have no source",
      "t5000[0:3, 0:4] in 'd.safetensors': 4 of its 12 elements have no "
      "source",
      "t9000[0:1, 0:4] in 'd.safetensors' is written twice",
  };
  EXPECT_EQ(verify(1), expected);
  EXPECT_EQ(verify(2), expected);
  EXPECT_EQ(verify(3), expected);
}

} // namespace
