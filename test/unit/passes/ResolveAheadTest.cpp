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

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace aoa;
using namespace aoa::plan_resolution_test;

namespace {

Compiled compileWith(Case c, unsigned threads) {
  c.threads = threads;
  return compile(c);
}

TEST(ResolveAheadTest, SamePlanWithAndWithoutThreads) {
  Compiled one = compileWith(rowsToColumns(), 1);
  Compiled two = compileWith(rowsToColumns(), 2);
  ASSERT_TRUE(one.ok);
  ASSERT_TRUE(two.ok);
  EXPECT_EQ(one.plan.sourceTensors.size(), 2u * 2500u);
  EXPECT_EQ(programText(one.plan), programText(two.plan));
  EXPECT_TRUE(execute(rowsToColumns(), two.plan).empty());
}

TEST(ResolveAheadTest, OverlapsReportedInKeyOrderOnAnyThreadCount) {
  // Keys spread over the three chunks of the walk, which goes in key order
  // ("t0" < "t1" < "t10" < ... < "t999"), not in the order of the numbers.
  std::set<int> overlapping{0, 7, 1023, 1024, 1500, 2047, 2048, 2499};
  Compiled one = compileWith(rowsToColumns(overlapping), 1);
  Compiled two = compileWith(rowsToColumns(overlapping), 2);
  EXPECT_FALSE(one.ok);
  EXPECT_FALSE(two.ok);
  ASSERT_EQ(one.errors.size(), overlapping.size());
  std::set<std::string> named;
  for (const std::string &error : one.errors) {
    size_t key = error.find("source key '");
    ASSERT_NE(key, std::string::npos) << error;
    EXPECT_NE(error.find("': stored shards overlap in ["), std::string::npos)
        << error;
    EXPECT_NE(error.find("without being replicas"), std::string::npos)
        << error;
    size_t begin = key + std::string("source key '").size();
    named.insert(error.substr(begin, error.find('\'', begin) - begin));
  }
  std::set<std::string> expected;
  for (int i : overlapping)
    expected.insert("t" + std::to_string(i));
  EXPECT_EQ(named, expected);
  // Key order: the walk's (sorted keys), whatever the thread count.
  EXPECT_TRUE(std::is_sorted(one.errors.begin(), one.errors.end()));
  EXPECT_EQ(one.errors, two.errors);
}

} // namespace
