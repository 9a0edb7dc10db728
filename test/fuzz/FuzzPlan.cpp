//===- FuzzPlan.cpp - Fuzz target: text plans -----------------------------===//
//
// The input is a plan file (docs/plan-format.md) as `aoa-run PLAN` reads it:
// read line by line, then verified (readPlanText runs verifyPlan).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "aoa/formats/plan/PlanReader.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  aoa::fuzz::RenderedDiagnostics r;
  aoa::readPlanText("fuzz.plan",
                    std::string_view(reinterpret_cast<const char *>(data), size),
                    r.sources, r.diags);
  return 0;
}
