//===- PlanBuilder.h - Small plans for the analysis tests -------*- C++ -*-===//
//
// The analysis reads only a plan's rounds: which instructions each rank
// runs and the sizes of their buffers. These tests build such plans directly
// (no files or tensors), one byte-sized element per byte, so each test says
// how many bytes move where.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_ANALYSIS_PLANBUILDER_H
#define AOA_TEST_UNIT_ANALYSIS_PLANBUILDER_H

#include "aoa/ir/Plan.h"

#include <cstdint>

namespace aoa::test {

class PlanBuilder {
public:
  PlanBuilder(uint32_t ranks, size_t rounds);

  /// `rank` reads `bytes` in `round`.
  PlanBuilder &read(uint32_t rank, size_t round, int64_t bytes);
  /// A message of `bytes` from `from` to `to` (a send and its receive).
  PlanBuilder &send(uint32_t from, uint32_t to, size_t round, int64_t bytes);
  /// A transform producing `bytes` (from an input of as many bytes).
  PlanBuilder &copy(uint32_t rank, size_t round, int64_t bytes);
  PlanBuilder &write(uint32_t rank, size_t round, int64_t bytes);
  /// Marks the plan as compiled with --shared-src.
  PlanBuilder &sharedSource() {
    plan_.sourceAccess = plan::SourceAccess::Shared;
    return *this;
  }

  const plan::Plan &plan() const { return plan_; }

private:
  uint32_t addBuffer(uint32_t rank, size_t round, int64_t bytes);
  plan::Round &roundOf(uint32_t rank, size_t round) {
    return plan_.programs[rank].rounds[round];
  }

  plan::Plan plan_;
};

} // namespace aoa::test

#endif // AOA_TEST_UNIT_ANALYSIS_PLANBUILDER_H
