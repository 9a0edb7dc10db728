//===- Passes.cpp - The pipeline's pass lists ------------------------------===//
#include "aoa/passes/Passes.h"

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
  pm.add(createFindShardSourcesPass());
}

std::vector<std::string> allPassNames() {
  PassManager pm;
  addPipeline(pm, PipelineStage::ShardSources);
  std::vector<std::string> names;
  for (const std::unique_ptr<Pass> &pass : pm.passes())
    names.push_back(pass->name());
  return names;
}

} // namespace aoa
