//===- WriteCoverage.cpp --------------------------------------------------===//
#include "aoa/runtime/WriteCoverage.h"

#include "aoa/ir/BoxOverlap.h"

namespace aoa::runtime {

Status checkWriteCoverage(const plan::Plan &plan) {
  std::vector<std::vector<const Box *>> writes(plan.destinationTensors.size());
  std::vector<int64_t> written(plan.destinationTensors.size(), 0);
  for (const plan::RankProgram &program : plan.programs)
    for (const plan::Round &round : program.rounds)
      for (const plan::Instruction &inst : round.instructions)
        if (inst.opcode == plan::Opcode::Write &&
            inst.tensor < plan.destinationTensors.size()) {
          writes[inst.tensor].push_back(&inst.region);
          written[inst.tensor] += inst.region.volume();
        }
  const char *hint = "the plan does not write every destination element "
                     "exactly once; recompile it (aoa-compile checks this)";
  for (size_t t = 0; t < plan.destinationTensors.size(); ++t) {
    const plan::StoredTensor &tensor = plan.destinationTensors[t];
    std::string where = "'" + plan.destinationFiles[tensor.file].path +
                        "': tensor '" + tensor.name + "' (" + tensor.key +
                        tensor.box.toString() + ")";
    if (std::optional<Box> twice = findOverlap(writes[t]))
      return Error{where + ": " + tensor.key + twice->toString() +
                       " is written twice",
                   hint};
    if (written[t] != tensor.storedElements())
      return Error{where + ": " +
                       std::to_string(tensor.storedElements() - written[t]) +
                       " of its " + std::to_string(tensor.storedElements()) +
                       " elements are never written",
                   hint};
  }
  return Status();
}

} // namespace aoa::runtime
