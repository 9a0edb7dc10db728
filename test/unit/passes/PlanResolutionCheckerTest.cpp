//===- PlanResolutionCheckerTest.cpp - The brute-force checker itself ---===//
//
// Corrupted plans and policy violations must be caught by the executor of
// PlanResolutionModel: the checker of the other PlanResolution tests is tested.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionModel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace aoa;
using namespace aoa::plan_resolution_test;

namespace {

//===----------------------------------------------------------------------===//
// The checker itself: corrupted plans must be caught
//===----------------------------------------------------------------------===//

/// (rank, round, instruction) of every instruction with `opcode`.
std::vector<std::tuple<size_t, size_t, size_t>>
instructionsOf(const plan::Plan &plan, plan::Opcode opcode) {
  std::vector<std::tuple<size_t, size_t, size_t>> out;
  for (size_t r = 0; r < plan.programs.size(); ++r)
    for (size_t n = 0; n < plan.programs[r].rounds.size(); ++n)
      for (size_t i = 0; i < plan.programs[r].rounds[n].instructions.size();
           ++i)
        if (plan.programs[r].rounds[n].instructions[i].opcode == opcode)
          out.push_back({r, n, i});
  return out;
}

TEST(PlanResolution, CheckerCatchesCorruptedPlans) {
  Rng rng(200);
  int caught[4] = {0, 0, 0, 0}, tried[4] = {0, 0, 0, 0};
  for (int i = 0; i < 80; ++i) {
    Case c = randomCase(rng, randomKind(rng));
    Compiled compiled = compile(c);
    ASSERT_TRUE(compiled.ok) << c.describe() << joined(compiled.errors);
    ASSERT_TRUE(execute(c, compiled.plan).empty());
    int mutation = int(rng.range(0, 3));
    plan::Plan plan = compiled.plan;
    auto pick = [&](plan::Opcode op) -> plan::Instruction * {
      auto all = instructionsOf(plan, op);
      if (all.empty())
        return nullptr;
      auto [r, n, k] = all[size_t(rng.range(0, int64_t(all.size()) - 1))];
      return &plan.programs[r].rounds[n].instructions[k];
    };
    auto erase = [&](plan::Opcode op) {
      auto all = instructionsOf(plan, op);
      if (all.empty())
        return false;
      auto [r, n, k] = all[size_t(rng.range(0, int64_t(all.size()) - 1))];
      auto &list = plan.programs[r].rounds[n].instructions;
      list.erase(list.begin() + std::ptrdiff_t(k));
      return true;
    };
    bool applied = false;
    switch (mutation) {
    case 0: // a write lost: elements unwritten
      applied = erase(plan::Opcode::Write);
      break;
    case 1: // a write repeated: elements written twice
      if (plan::Instruction *w = pick(plan::Opcode::Write)) {
        plan::Instruction copy = *w;
        for (auto &program : plan.programs)
          for (auto &round : program.rounds)
            for (size_t k = 0; k < round.instructions.size(); ++k)
              if (&round.instructions[k] == w) {
                round.instructions.push_back(copy);
                applied = true;
              }
      }
      break;
    case 2: // a receive lost: unmatched send, unfilled buffer
      applied = erase(plan::Opcode::Recv);
      break;
    case 3: // a read shifted by one: wrong labels or unstored elements
      if (plan::Instruction *r = pick(plan::Opcode::Read)) {
        std::vector<int64_t> delta(r->region.rank(), 0);
        delta[size_t(rng.range(0, int64_t(delta.size()) - 1))] = 1;
        r->region = r->region.translate(delta);
        applied = true;
      }
      break;
    }
    if (!applied)
      continue;
    ++tried[mutation];
    if (!execute(c, plan).empty())
      ++caught[mutation];
    else
      ADD_FAILURE() << "mutation " << mutation << " not caught\n"
                    << c.describe();
  }
  for (int m = 0; m < 4; ++m)
    EXPECT_GT(tried[m], 5) << "mutation " << m;
}

// A remote read although the writing rank stores a replica; a cast made
// with the wrong dtype; a transposition dropped; a budget overrun.
TEST(PlanResolution, CheckerCatchesPolicyViolations) {
  Case c;
  c.kind = "transpose";
  c.config = "a^T -> b\n";
  c.model["b"] = permuteModel("a", {1, 0});
  c.source.push_back(key("a", {2, 3},
                         {shard(0, "src", "a", Box({0, 0}, {2, 3})),
                          shard(1, "src", "a", Box({0, 0}, {2, 3}))}));
  c.destination.push_back(
      key("b", {3, 2}, {shard(1, "dst", "b", Box({0, 0}, {3, 2}))}));
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  ASSERT_TRUE(execute(c, compiled.plan).empty());

  // Read on rank 0 from its replica and send it to rank 1.
  plan::Plan remote = compiled.plan;
  plan::StoredTensor replica = remote.sourceTensors[0];
  replica.name = "a";
  replica.file = uint32_t(remote.sourceFiles.size());
  remote.sourceFiles.push_back(plan::File{fileOf("src", 0), 0, std::nullopt});
  remote.sourceTensors.push_back(replica);
  plan::Round &r0 = remote.programs[0].rounds[0];
  plan::Round &r1 = remote.programs[1].rounds[0];
  ASSERT_EQ(r1.instructions[0].opcode, plan::Opcode::Read);
  plan::Instruction read = r1.instructions[0];
  r0.buffers.push_back(r1.buffers[read.buffer]);
  read.buffer = uint32_t(r0.buffers.size() - 1);
  read.tensor = uint32_t(remote.sourceTensors.size() - 1);
  r0.instructions.push_back(read);
  plan::Instruction send;
  send.opcode = plan::Opcode::Send;
  send.peer = 1;
  send.buffers = {read.buffer};
  r0.instructions.push_back(send);
  plan::Instruction recv;
  recv.opcode = plan::Opcode::Recv;
  recv.peer = 0;
  recv.buffers = {r1.instructions[0].buffer};
  r1.instructions[0] = recv;
  std::string all = joined(execute(c, remote));
  EXPECT_NE(all.find("stores its source element"), std::string::npos) << all;

  // The copy's transposition dropped: shapes or labels no longer agree.
  plan::Plan unpermuted = compiled.plan;
  for (plan::Instruction &in : unpermuted.programs[1].rounds[0].instructions)
    if (in.opcode == plan::Opcode::Copy)
      in.transform = 0; // the empty transform
  EXPECT_FALSE(execute(c, unpermuted).empty());

  // A cast to the wrong dtype.
  plan::Plan cast = compiled.plan;
  for (plan::Instruction &in : cast.programs[1].rounds[0].instructions)
    if (in.opcode == plan::Opcode::Copy) {
      plan::TransformStep step;
      step.kind = plan::TransformStep::Kind::Cast;
      step.dtype = DType::F16;
      std::vector<plan::TransformStep> steps = cast.steps(in);
      steps.push_back(step);
      in.transform = cast.transforms.intern(steps);
    }
  EXPECT_FALSE(execute(c, cast).empty());

  // Two transfers' buffers in one round over the budget.
  plan::Plan tight = compiled.plan;
  tight.memoryBudget = 1;
  plan::Round &round = tight.programs[1].rounds[0];
  round.buffers.push_back(round.buffers[0]);
  plan::Instruction extra = round.instructions[0];
  extra.buffer = uint32_t(round.buffers.size() - 1);
  round.instructions.insert(round.instructions.begin() + 1, extra);
  all = joined(execute(c, tight));
  EXPECT_NE(all.find("over the budget"), std::string::npos) << all;
}

} // namespace
