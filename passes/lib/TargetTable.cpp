//===- TargetTable.cpp -----------------------------------------------------===//
#include "aoa/passes/TargetTable.h"

#include <algorithm>

namespace aoa {

void TargetTable::reset(const ShardMetadata *destination) {
  destination_ = destination;
  byTensor_.clear();
  byTensor_.shrink_to_fit();
  if (destination)
    byTensor_.resize(destination->tensorCount());
  byName_ = {};
}

bool TargetTable::insert(std::string_view key, TargetBinding binding) {
  if (destination_)
    if (std::optional<TensorRef> tensor = destination_->find(key))
      return insert(*destination_, tensor->id(), std::move(binding));
  return byName_.emplace(std::string(key), std::move(binding)).second;
}

bool TargetTable::insert(const ShardMetadata &metadata, TensorId tensor,
                         TargetBinding binding) {
  if (!byId(metadata))
    return insert(metadata.tensor(tensor).key(), std::move(binding));
  std::unique_ptr<TargetBinding> &slot = byTensor_[tensor];
  if (slot)
    return false;
  slot = std::make_unique<TargetBinding>(std::move(binding));
  return true;
}

const TargetBinding *TargetTable::find(std::string_view key) const {
  if (destination_)
    if (std::optional<TensorRef> tensor = destination_->find(key))
      return byTensor_[tensor->id()].get();
  auto found = byName_.find(std::string(key));
  return found == byName_.end() ? nullptr : &found->second;
}

const TargetBinding *TargetTable::find(const ShardMetadata &metadata,
                                       TensorId tensor) const {
  if (!byId(metadata))
    return find(metadata.tensor(tensor).key());
  return byTensor_[tensor].get();
}

void TargetTable::erase(const ShardMetadata &metadata, TensorId tensor) {
  if (byId(metadata))
    byTensor_[tensor].reset();
  else
    byName_.erase(std::string(metadata.tensor(tensor).key()));
}

size_t TargetTable::size() const {
  return byName_.size() +
         size_t(std::count_if(byTensor_.begin(), byTensor_.end(),
                              [](const auto &slot) { return slot != nullptr; }));
}

std::vector<std::pair<std::string_view, const TargetBinding *>>
TargetTable::sorted() const {
  std::vector<std::pair<std::string_view, const TargetBinding *>> entries;
  entries.reserve(size());
  for (TensorId id = 0; id < byTensor_.size(); ++id)
    if (byTensor_[id])
      entries.emplace_back(destination_->tensor(id).key(), byTensor_[id].get());
  for (const auto &[key, binding] : byName_)
    entries.emplace_back(key, &binding);
  std::sort(entries.begin(), entries.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  return entries;
}

} // namespace aoa
