//===- Passes.cpp - The pipeline's pass lists
//------------------------------===//
#include "aoa/passes/Passes.h"

#include <algorithm>

namespace aoa {

void addMacroPasses(PassManager &pm) {
  pm.add(createExpandIdsPass());
  pm.add(createExpandArraysPass());
  pm.add(createExpandStarsPass());
  pm.add(createVarMappingChainPass());
  pm.add(createLowerTransposeSuffixPass());
  pm.add(createLowerFusedQkvOldPass());
  pm.add(createLowerFusedFfnPass());
  pm.add(createLowerFusedQkvPass());
}

void addPipeline(PassManager &pm, PipelineStage stage) {
  addMacroPasses(pm);
  if (stage == PipelineStage::Macros)
    return;
  pm.add(createBuildOpsPass());
  pm.add(createPropagateShapesPass());
  if (stage == PipelineStage::Ops)
    return;
  pm.add(createResolveOutputsPass());
  if (stage == PipelineStage::ShardSources) {
    pm.add(createFindShardSourcesPass());
    return;
  }
  pm.add(createDeriveDestinationPass());
  if (stage == PipelineStage::DerivedDestination)
    return;
  pm.add(createResolveShardSourcesPass());
  pm.add(createVerifyPass());
  pm.add(createSchedulePass());
}

std::vector<std::string> allPassNames() {
  PassManager pm;
  addPipeline(pm, PipelineStage::ShardSources);
  PassManager planPasses;
  addPipeline(planPasses, PipelineStage::Plan);
  std::vector<std::string> names;
  for (const std::unique_ptr<Pass> &pass : pm.passes())
    names.push_back(pass->name());
  // The plan pipeline shares everything up to resolve-outputs.
  for (const std::unique_ptr<Pass> &pass : planPasses.passes())
    if (std::find(names.begin(), names.end(), pass->name()) == names.end())
      names.push_back(pass->name());
  return names;
}

} // namespace aoa
