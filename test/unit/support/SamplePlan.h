//===- SamplePlan.h - The example plan, read into the model -----*- C++ -*-===//
//
// kSamplePlanText (SamplePlanText.h) through the plan's text reader, for the
// tests that encode it or change it; a test that includes this header links
// formats/plan.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_SAMPLEPLAN_H
#define AOA_TEST_UNIT_SAMPLEPLAN_H

#include "CapturedDiagnostics.h"
#include "SamplePlanText.h"

#include "aoa/formats/plan/PlanReader.h"

#include <gtest/gtest.h>

#include <optional>

namespace aoa::test {

/// The sample plan; an empty plan (and a test failure) if it cannot be read.
inline plan::Plan readSamplePlan() {
  CapturedDiagnostics captured;
  std::optional<plan::Plan> plan = readPlanText(
      "sample.plan", kSamplePlanText, captured.sources, captured.diags);
  EXPECT_TRUE(plan) << captured.all();
  return plan ? std::move(*plan) : plan::Plan();
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_SAMPLEPLAN_H
