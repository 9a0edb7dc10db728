//===- PlanResolutionModel.cpp - Compiling and running the cases ----------===//
//
// Shared by the PlanResolution*Test files: the geometry helpers, the
// in-process compile, and the drivers that compile a case and execute its
// plan. The cases are made in PlanResolutionLayouts.cpp and
// PlanResolutionCases.cpp; the plan is executed on labels and checked in
// PlanResolutionExecutor.cpp and PlanResolutionChecker.cpp.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionModel.h"

#include "aoa/frontend/ConfigLoader.h"
#include "aoa/frontend/Parser.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/SourceManager.h"
#include "aoa/passes/CompilationState.h"
#include "aoa/passes/KeySpace.h"
#include "aoa/passes/Pass.h"
#include "aoa/passes/Passes.h"

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

namespace aoa::plan_resolution_test {

//===----------------------------------------------------------------------===//
// Independent geometry helpers (no library code)
//===----------------------------------------------------------------------===//

int64_t volumeOf(llvm::ArrayRef<int64_t> shape) {
  int64_t v = 1;
  for (int64_t e : shape)
    v *= e;
  return v;
}

/// Row-major index of global point `p` inside `box` (-1 when outside).
int64_t indexIn(const Box &box, const Point &p) {
  if (p.size() != box.rank())
    return -1;
  int64_t index = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const Interval &d = box.dim(i);
    if (p[i] < d.begin || p[i] >= d.end)
      return -1;
    index = index * (d.end - d.begin) + (p[i] - d.begin);
  }
  return index;
}

/// Global point at row-major index `index` of `box`.
Point pointAt(const Box &box, int64_t index) {
  Point p(box.rank());
  for (size_t i = box.rank(); i-- > 0;) {
    int64_t size = box.dim(i).end - box.dim(i).begin;
    p[i] = box.dim(i).begin + index % size;
    index /= size;
  }
  return p;
}

Box wholeBox(const std::vector<int64_t> &shape) {
  return Box(std::vector<int64_t>(shape.size(), 0), shape);
}

std::string str(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

ShardMetadata buildMetadata(const std::vector<KeySpec> &keys) {
  ShardMetadataBuilder builder;
  for (const KeySpec &k : keys) {
    EXPECT_TRUE(builder.addTensor(k.key, k.dtype, k.shape).has_value());
    for (const ShardSpec &s : k.shards)
      EXPECT_TRUE(builder
                      .addShard(s.rank, s.file, s.name, s.box.offsets(),
                                s.box.shape(), s.flat)
                      .has_value());
  }
  return builder.finish();
}

Compiled compile(const Case &c) {
  Compiled out;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  diags.setHandler([&](const Diagnostic &d) {
    if (d.severity == Severity::Error)
      out.errors.push_back(renderDiagnostic(d, sources));
  });
  ShardMetadata source = buildMetadata(c.source);
  ShardMetadata destination = buildMetadata(c.destination);
  CompilationState state(sources, diags);
  if (!c.config.empty()) {
    std::optional<ConfigFile> config =
        loadConfigText("case.aoa", c.config, sources, diags);
    if (!config)
      return out;
    std::optional<Program> program = parseConfig(*config, sources, diags);
    if (!program)
      return out;
    state.program = std::move(*program);
  }
  state.source = KeySpace(source, "source", "src.json");
  state.destination = KeySpace(destination, "destination", "dst.json");
  state.memoryBudget = c.budget;
  state.sharedSource = c.sharedSource;
  state.threads = c.threads;
  PassManager pm;
  addPipeline(pm, PipelineStage::Plan);
  std::ostringstream sink;
  bool ran = pm.run(state, PassInstrumentation{}, sink);
  out.ok = ran && !diags.hadErrors();
  out.plan = std::move(state.plan);
  return out;
}

/// Every failure the executor would report for `plan` of `c`.
std::vector<std::string> execute(const Case &c, const plan::Plan &plan) {
  Stats stats;
  return executePlan(c, plan, stats);
}

std::string programText(const plan::Plan &plan) {
  std::ostringstream os;
  for (const plan::RankProgram &program : plan.programs)
    for (const plan::Round &round : program.rounds) {
      for (const plan::BufferDecl &buffer : round.buffers)
        os << dtypeName(buffer.dtype) << str(buffer.shape.vec()) << ";";
      for (const plan::Instruction &in : round.instructions) {
        os << int(in.opcode) << " " << in.buffer << " " << in.input << " "
           << in.tensor << " " << in.peer << " " << in.transform << " "
           << in.region.toString();
        for (uint32_t b : in.buffers)
          os << " %" << b;
        os << ";";
      }
      os << "\n";
    }
  return os.str();
}

std::vector<int64_t> bytesReadPerRank(const plan::Plan &plan) {
  std::vector<int64_t> bytes(plan.programs.size(), 0);
  for (size_t rank = 0; rank < plan.programs.size(); ++rank)
    for (const plan::Round &round : plan.programs[rank].rounds)
      for (const plan::Instruction &in : round.instructions)
        if (in.opcode == plan::Opcode::Read)
          bytes[rank] +=
              in.region.volume() *
              int64_t(dtypeSize(plan.sourceTensors[in.tensor].dtype));
  return bytes;
}

bool hasError(const Compiled &compiled, const std::string &needle) {
  for (const std::string &e : compiled.errors)
    if (e.find(needle) != std::string::npos)
      return true;
  return false;
}

/// The stored unit of a source shard: its box and flat range ([0, volume)
/// and no range are the same).
std::pair<Box, std::pair<int64_t, int64_t>> unitOf(const ShardSpec &s) {
  if (s.flat)
    return {s.box, {s.flat->begin, s.flat->end}};
  return {s.box, {0, s.box.volume()}};
}

void expectError(const Case &c, const std::string &needle, int i) {
  Compiled compiled = compile(c);
  EXPECT_FALSE(compiled.ok) << "case " << i << "\n" << c.describe();
  EXPECT_TRUE(hasError(compiled, needle))
      << "case " << i << ": no error mentions '" << needle << "'\n"
      << c.describe() << joined(compiled.errors);
}

std::string joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const std::string &l : lines)
    s += l + "\n";
  return s;
}

std::vector<std::string> compileAndRun(
    const Case &c, Stats &stats,
    const std::function<std::vector<std::string>(const plan::Plan &)>
        &planChecks) {
  Compiled compiled = compile(c);
  if (!compiled.ok) {
    std::vector<std::string> out = {"compilation failed"};
    out.insert(out.end(), compiled.errors.begin(), compiled.errors.end());
    return out;
  }
  ++stats.cases;
  std::vector<std::string> out = executePlan(c, compiled.plan, stats);
  if (planChecks) {
    std::vector<std::string> more = planChecks(compiled.plan);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Randomized tests
//===----------------------------------------------------------------------===//

void runRandom(Kind kind, uint64_t seed, int count) {
  Rng rng(seed);
  Stats stats;
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    Case c = randomCase(rng, kind);
    std::vector<std::string> errors = compileAndRun(c, stats);
    if (!errors.empty()) {
      ADD_FAILURE() << "case " << i << " (seed " << seed << ")\n"
                    << c.describe() << joined(errors);
      if (++failures >= 3)
        return;
    }
  }
  // The generator exercises what it should.
  EXPECT_EQ(stats.cases, size_t(count));
  std::cerr << "[" << kindName(kind) << "] cases " << stats.cases << ", rounds "
            << stats.rounds << " (multi-round cases " << stats.multiRound
            << "), reads " << stats.reads << ", messages " << stats.messages
            << ", copies " << stats.copies << ", writes " << stats.writes
            << ", elements " << stats.elements << ", flat source shards "
            << stats.flatSource << ", flat destination shards "
            << stats.flatDestination << ", keys with source replicas "
            << stats.replicatedSource << ", over-budget single-transfer rounds "
            << stats.overBudgetSingles
            << ", elements whose writer holds one of several replicas "
            << stats.localReplicaChoices
            << ", source elements read again by overlapping reads "
            << stats.elementsReadAgain << "\n";
}

} // namespace aoa::plan_resolution_test
