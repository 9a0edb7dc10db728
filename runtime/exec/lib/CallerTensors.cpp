//===- CallerTensors.cpp - Destination tensors in the caller's memory -----===//
#include "aoa/runtime/exec/CallerTensors.h"

#include "aoa/ir/DType.h"
#include "aoa/ir/ShardMetadata.h"

#include <map>

namespace aoa::runtime {

uint64_t destinationTensorBytes(const plan::Plan &plan, uint32_t tensor) {
  const plan::StoredTensor &stored = plan.destinationTensors[tensor];
  return uint64_t(stored.storedElements()) * dtypeSize(stored.dtype);
}

Expected<std::vector<uint8_t *>>
bindCallerTensors(const plan::Plan &plan, uint32_t rank,
                  const std::vector<CallerTensor> &tensors,
                  const std::string &what) {
  // The rank's tensors by (file, name), and by name alone.
  std::map<std::pair<std::string, std::string>, uint32_t> ours;
  std::map<std::string, std::vector<uint32_t>> byName;
  for (uint32_t t = 0; t < plan.destinationTensors.size(); ++t) {
    const plan::StoredTensor &tensor = plan.destinationTensors[t];
    const plan::File &file = plan.destinationFiles[tensor.file];
    if (file.rank != rank)
      continue;
    ours[{file.path, tensor.name}] = t;
    byName[tensor.name].push_back(t);
  }
  std::vector<uint8_t *> bound(plan.destinationTensors.size(), nullptr);
  std::vector<bool> given(plan.destinationTensors.size(), false);
  std::vector<std::string> problems;
  for (const CallerTensor &tensor : tensors) {
    std::string name =
        tensor.file.empty() ? tensor.name : tensor.file + ": " + tensor.name;
    uint32_t id = 0;
    if (tensor.file.empty()) {
      auto found = byName.find(tensor.name);
      if (found == byName.end()) {
        problems.push_back(name + " is not a tensor of this rank's "
                                  "destination files");
        continue;
      }
      if (found->second.size() > 1) {
        problems.push_back(name + " names a tensor of " +
                           std::to_string(found->second.size()) +
                           " of this rank's files; give its file too");
        continue;
      }
      id = found->second.front();
    } else {
      auto found = ours.find({tensor.file, tensor.name});
      if (found == ours.end()) {
        problems.push_back(name + " is not a tensor of this rank's "
                                  "destination files");
        continue;
      }
      id = found->second;
    }
    const plan::StoredTensor &stored = plan.destinationTensors[id];
    uint64_t bytes = destinationTensorBytes(plan, id);
    if (tensor.bytes != bytes || (!tensor.data && bytes))
      problems.push_back(name + " is given " + std::to_string(tensor.bytes) +
                         " bytes" + (tensor.data ? "" : " at null") +
                         " but holds " + std::string(dtypeName(stored.dtype)) +
                         formatShape(stored.storedShape()) + " (" +
                         std::to_string(bytes) + " bytes)");
    else if (given[id])
      problems.push_back(name + " is given twice");
    else {
      given[id] = true;
      bound[id] = static_cast<uint8_t *>(tensor.data);
    }
  }
  for (const auto &[where, t] : ours)
    if (!given[t] && plan.destinationTensors[t].storedElements() > 0)
      problems.push_back(where.first + ": " + where.second + " is not given");
  if (problems.empty())
    return bound;
  std::string message =
      "the " + what + " do not match this rank's destination tensors:";
  for (size_t k = 0; k < problems.size() && k < 20; ++k)
    message += "\n  " + problems[k];
  if (problems.size() > 20)
    message += "\n  and " + std::to_string(problems.size() - 20) + " more";
  return Error{message, "give one " + what.substr(0, what.size() - 1) +
                            " per tensor of the rank's destination files, "
                            "sized as the file would store it"};
}

} // namespace aoa::runtime
