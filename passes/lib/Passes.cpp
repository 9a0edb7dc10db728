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

std::vector<std::string> allPassNames() {
  PassManager pm;
  addMacroPasses(pm);
  std::vector<std::string> names;
  for (const std::unique_ptr<Pass> &pass : pm.passes())
    names.push_back(pass->name());
  return names;
}

} // namespace aoa
