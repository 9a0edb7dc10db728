//===- PlanMemoryTest.cpp - What resolve and schedule share and release ----===//
//
// A large compile's peak is its plan beside what the passes still hold
// (docs/compiler.md): the stored tensors of a key share one global shape,
// a round's buffers of one shape share one list, and resolve-shard-sources
// erases each destination key's target from the dataflow once it has bound
// the key, with one thread and with pieces answered ahead. The plans stay
// the same.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionModel.h"

#include "aoa/ir/Diagnostics.h"
#include "aoa/passes/CompilationState.h"
#include "aoa/passes/Pass.h"
#include "aoa/passes/Passes.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace aoa;
using namespace aoa::plan_resolution_test;

namespace {

struct PassesRun {
  bool ok = false;
  size_t targetsLeft = 0;
  plan::Plan plan;
};

/// Runs the plan pipeline on `c` with `threads`, keeping what the state
/// holds after resolve-shard-sources.
PassesRun run(const Case &c, unsigned threads) {
  PassesRun out;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  ShardMetadata source = buildMetadata(c.source);
  ShardMetadata destination = buildMetadata(c.destination);
  CompilationState state(sources, diags);
  state.source = KeySpace(source, "source", "src.json");
  state.destination = KeySpace(destination, "destination", "dst.json");
  state.threads = threads;
  PassManager pm;
  addPipeline(pm, PipelineStage::Plan);
  PassInstrumentation instrumentation;
  instrumentation.afterPass = [&](const Pass &pass) {
    if (std::string_view(pass.name()) == "resolve-shard-sources")
      out.targetsLeft = state.dataflow.targets.size();
  };
  std::ostringstream sink;
  out.ok = pm.run(state, instrumentation, sink) && !diags.hadErrors();
  out.plan = std::move(state.plan);
  return out;
}

TEST(PlanMemoryTest, StoredTensorsOfAKeyShareOneGlobalShape) {
  PassesRun one = run(rowsToColumns(), 1);
  ASSERT_TRUE(one.ok);
  for (const auto *tensors :
       {&one.plan.sourceTensors, &one.plan.destinationTensors}) {
    std::map<std::string, const plan::StoredTensor *> firstOfKey;
    for (const plan::StoredTensor &t : *tensors) {
      auto [first, added] = firstOfKey.emplace(t.key.str(), &t);
      EXPECT_EQ(t.globalShape.vec(), (std::vector<int64_t>{4, 6}));
      if (!added) {
        EXPECT_TRUE(t.globalShape.sharesWith(first->second->globalShape))
            << t.key;
      }
    }
    EXPECT_EQ(firstOfKey.size(), 2500u);
  }
}

TEST(PlanMemoryTest, BuffersOfOneShapeInARoundShareOneList) {
  PassesRun one = run(rowsToColumns(), 1);
  ASSERT_TRUE(one.ok);
  size_t buffers = 0;
  for (const plan::RankProgram &program : one.plan.programs)
    for (const plan::Round &round : program.rounds) {
      std::map<std::vector<int64_t>, const plan::BufferDecl *> firstOfShape;
      for (const plan::BufferDecl &buffer : round.buffers) {
        auto [first, added] =
            firstOfShape.emplace(buffer.shape.vec(), &buffer);
        if (!added) {
          EXPECT_TRUE(buffer.shape.sharesWith(first->second->shape));
        }
        ++buffers;
      }
    }
  EXPECT_GE(buffers, 2u * 2500u); // a read and a receive per row block
}

TEST(PlanMemoryTest, ResolveErasesTheTargetsItHasBound) {
  // With one thread, the key walked last stays; with pieces answered ahead
  // (1024 keys a chunk), the keys of the last chunk do.
  PassesRun one = run(rowsToColumns(), 1);
  PassesRun two = run(rowsToColumns(), 2);
  ASSERT_TRUE(one.ok);
  ASSERT_TRUE(two.ok);
  EXPECT_EQ(one.targetsLeft, 1u);
  EXPECT_EQ(two.targetsLeft, 2500u - 2 * 1024u);
  EXPECT_EQ(programText(one.plan), programText(two.plan));
  EXPECT_EQ(one.plan.sourceTensors.size(), two.plan.sourceTensors.size());
  EXPECT_EQ(one.plan.destinationTensors.size(),
            two.plan.destinationTensors.size());
}

} // namespace
