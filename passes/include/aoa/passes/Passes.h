//===- Passes.h - Every pass of aoa-compile ---------------------*- C++ -*-===//
#ifndef AOA_PASSES_PASSES_H
#define AOA_PASSES_PASSES_H

#include "aoa/passes/Pass.h"

#include <memory>

namespace aoa {

// Macro passes, in the reference's priority order. They rewrite the
// statements (never text) and record where each generated statement came
// from.
std::unique_ptr<Pass> createExpandIdsPass();
std::unique_ptr<Pass> createExpandArraysPass();
std::unique_ptr<Pass> createExpandStarsPass();
std::unique_ptr<Pass> createVarMappingChainPass();
std::unique_ptr<Pass> createLowerTransposeSuffixPass();
std::unique_ptr<Pass> createLowerFusedQkvOldPass();
std::unique_ptr<Pass> createLowerFusedFfnPass();
std::unique_ptr<Pass> createLowerFusedQkvPass();

/// Adds the macro passes, in order, to `pm`.
void addMacroPasses(PassManager &pm);

// The compiler core: statements to ops, ops over views, outputs, answers.
std::unique_ptr<Pass> createBuildOpsPass();
std::unique_ptr<Pass> createPropagateShapesPass();
std::unique_ptr<Pass> createResolveOutputsPass();
std::unique_ptr<Pass> createFindShardSourcesPass();

// Transfer plans: stored sources, verification, rounds.
std::unique_ptr<Pass> createDeriveDestinationPass();
std::unique_ptr<Pass> createResolveShardSourcesPass();
std::unique_ptr<Pass> createVerifyPass();
std::unique_ptr<Pass> createSchedulePass();

/// How far the pipeline goes.
enum class PipelineStage {
  Macros,       ///< the expanded statements (--emit=expanded)
  Ops,          ///< ops with result types (--emit=ir)
  ShardSources, ///< answers to every target (--emit=mappings)
  /// The derived destination layout (no --dst): what the statements write,
  /// each target whole (aoa-layout --config).
  DerivedDestination,
  Plan, ///< the transfer program (--emit=plan)
};

/// Adds every pass up to `stage`, in order, to `pm`.
void addPipeline(PassManager &pm, PipelineStage stage);

} // namespace aoa

#endif // AOA_PASSES_PASSES_H
