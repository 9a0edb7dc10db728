//===- ResolveAheadTest.cpp - Answers and replica groups worked out ahead -===//
//
// With threads, resolve-shard-sources answers the next chunk of destination
// keys on a second thread and groups the replicas of the source keys those
// answers read first, as far as it gets before the binding needs them
// (PieceAnswers.h). The binding reports a key's overlapping shards when it
// first reads the key, whoever grouped it: diagnostics are those of one
// thread, in the same order, and so is the plan.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionModel.h"

#include "aoa/ir/Diagnostics.h"
#include "aoa/passes/CompilationState.h"
#include "aoa/passes/Pass.h"
#include "aoa/passes/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace aoa;
using namespace aoa::plan_resolution_test;

namespace {

/// 2500 keys (three chunks of answers ahead), split in rows over two source
/// ranks and in columns over two destination ranks; the keys in `overlapping`
/// have a third source shard over both rows that is no replica of them.
Case rowsToColumns(const std::set<int> &overlapping) {
  Case c;
  c.kind = "rows-to-columns";
  for (int i = 0; i < 2500; ++i) {
    std::string name = "t" + std::to_string(i);
    std::vector<ShardSpec> stored{shard(0, "src", name, Box({0, 0}, {2, 6})),
                                  shard(1, "src", name, Box({2, 0}, {2, 6}))};
    if (overlapping.count(i))
      stored.push_back(shard(1, "src", name + "@overlap", Box({1, 0}, {2, 6})));
    c.source.push_back(key(name, {4, 6}, stored));
    c.destination.push_back(key(name, {4, 6},
                                {shard(0, "dst", name, Box({0, 0}, {4, 3})),
                                 shard(1, "dst", name, Box({0, 3}, {4, 3}))}));
  }
  return c;
}

struct Compiled {
  bool ok = false;
  std::vector<std::string> errors; ///< message and hints, in order
  std::string transfers;           ///< --print-after resolve-shard-sources
};

Compiled compile(const Case &c, unsigned threads) {
  Compiled out;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  diags.setHandler([&](const Diagnostic &d) {
    std::string text = d.message;
    for (const std::string &hint : d.hints)
      text += " / " + hint;
    out.errors.push_back(text);
  });
  ShardMetadata source = buildMetadata(c.source);
  ShardMetadata destination = buildMetadata(c.destination);
  CompilationState state(sources, diags);
  state.source = KeySpace(source, "source", "src.json");
  state.destination = KeySpace(destination, "destination", "dst.json");
  state.threads = threads;
  PassManager pm;
  addPipeline(pm, PipelineStage::Plan);
  PassInstrumentation instrumentation;
  instrumentation.printAfter = {"resolve-shard-sources"};
  std::ostringstream printed;
  out.ok = pm.run(state, instrumentation, printed) && !diags.hadErrors();
  out.transfers = printed.str();
  return out;
}

TEST(ResolveAheadTest, SameTransfersWithAndWithoutThreads) {
  Compiled one = compile(rowsToColumns({}), 1);
  Compiled two = compile(rowsToColumns({}), 2);
  ASSERT_TRUE(one.ok);
  ASSERT_TRUE(two.ok);
  // Four transfers a key: each destination column block takes both rows.
  EXPECT_EQ(std::count(one.transfers.begin(), one.transfers.end(), '\n'),
            4 * 2500 + 1); // and the pass's header line
  EXPECT_EQ(one.transfers, two.transfers);
}

TEST(ResolveAheadTest, OverlapsReportedInKeyOrderOnAnyThreadCount) {
  // Keys spread over the three chunks of the walk, which goes in key order
  // ("t0" < "t1" < "t10" < ... < "t999"), not in the order of the numbers.
  std::set<int> overlapping{0, 7, 1023, 1024, 1500, 2047, 2048, 2499};
  Compiled one = compile(rowsToColumns(overlapping), 1);
  Compiled two = compile(rowsToColumns(overlapping), 2);
  EXPECT_FALSE(one.ok);
  EXPECT_FALSE(two.ok);
  ASSERT_EQ(one.errors.size(), overlapping.size());
  std::set<std::string> named;
  for (const std::string &error : one.errors) {
    EXPECT_NE(error.find("stored shards overlap in ["),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("without being replicas / replicas have equal"),
              std::string::npos)
        << error;
    named.insert(error.substr(0, error.find("':")));
  }
  std::set<std::string> expected;
  for (int i : overlapping)
    expected.insert("source key 't" + std::to_string(i));
  EXPECT_EQ(named, expected);
  // Key order: the walk's (sorted keys), whatever the thread count.
  EXPECT_TRUE(std::is_sorted(one.errors.begin(), one.errors.end()));
  EXPECT_EQ(one.errors, two.errors);
}

} // namespace
