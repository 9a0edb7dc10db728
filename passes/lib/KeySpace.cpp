//===- KeySpace.cpp --------------------------------------------------------===//
#include "aoa/passes/KeySpace.h"

#include "aoa/ir/OptimizerState.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <iterator>

namespace aoa {

std::optional<size_t> KeySpace::storedFormIndex(std::string_view suffix) {
  if (suffix.empty())
    return 0;
  for (size_t i = 0; i < std::size(kOptimizerSuffixes); ++i)
    if (suffix == kOptimizerSuffixes[i])
      return i + 1;
  return std::nullopt;
}

KeySpace::KeySpace(const ShardMetadata &metadata, std::string sideName,
                   std::string path)
    : metadata_(&metadata), sideName_(std::move(sideName)),
      path_(std::move(path)) {
  // Form i > 0 is kOptimizerSuffixes[i - 1]: the first that is not
  // sharded like the key is the first beta-pow accumulator.
  static_assert(kOptimizerSuffixes[kShardedLikeKey - 1] ==
                std::string_view(".beta1_pow_acc_0"));
  // The map and lists hold views of the metadata's interned keys (a model
  // key is a prefix of its stored key), so lookups never copy a string. A
  // stored key is found in the metadata's own index; only model keys need
  // a map of their own.
  llvm::ArrayRef<TensorId> byKey = metadata.tensorIdsByKey();
  std::vector<std::string_view> storedKeys;
  storedKeys.reserve(byKey.size());
  StoredForms none;
  none.fill(kNoTensor);
  for (TensorId id : byKey) {
    std::string_view key = metadata.tensor(id).key();
    storedKeys.push_back(key);
    auto [model, suffix] = splitOptimizerSuffix(key);
    auto [entry, inserted] =
        modelKeyTensors_.try_emplace(llvm::StringRef(model), none);
    if (inserted)
      modelKeys_.emplace_back(model);
    if (std::optional<size_t> index = storedFormIndex(suffix))
      entry->second[*index] = id;
  }
  // A model key that is stored under a suffixed spelling of another
  // (`a.w_0` beside `a.w_0.moment1_0`) is stored itself all the same.
  for (auto &[model, tensors] : modelKeyTensors_)
    if (tensors[0] == kNoTensor)
      if (std::optional<TensorRef> tensor =
              metadata.find(std::string_view(model)))
        tensors[0] = tensor->id();
  std::sort(modelKeys_.begin(), modelKeys_.end());
  // Both lists are sorted (tensorIdsByKey is in byte order) and without
  // repeats: their union is every name once, sorted.
  names_.reserve(storedKeys.size() + modelKeys_.size());
  std::set_union(storedKeys.begin(), storedKeys.end(), modelKeys_.begin(),
                 modelKeys_.end(), std::back_inserter(names_));
}

bool KeySpace::contains(std::string_view name) const {
  return isModelKey(name) || isStoredKey(name);
}

bool KeySpace::isStoredKey(std::string_view key) const {
  return metadata_ && metadata_->find(key).has_value();
}

KeySpace::StoredForms KeySpace::storedForms(std::string_view name) const {
  StoredForms forms;
  forms.fill(kNoTensor);
  if (!metadata_)
    return forms;
  if (const StoredForms *tensors = findModelKey(name))
    return *tensors;
  // Not a model key: no stored key is `name` + a suffix (its model key
  // would be `name`), so only the name itself can be stored.
  if (std::optional<TensorRef> tensor = metadata_->find(name))
    forms[0] = tensor->id();
  return forms;
}

std::optional<TensorRef>
KeySpace::representative(const StoredForms &forms) const {
  // (The key itself first, when it is stored.)
  for (size_t i = 0; i < kShardedLikeKey; ++i)
    if (forms[i] != kNoTensor)
      return metadata_->tensor(forms[i]);
  return std::nullopt;
}

std::optional<TensorRef> KeySpace::representative(std::string_view name) const {
  return representative(storedForms(name));
}

std::optional<size_t> KeySpace::rankOf(std::string_view name) const {
  if (std::optional<TensorRef> tensor = representative(name))
    return tensor->ndim();
  return std::nullopt;
}

std::optional<int64_t> KeySpace::countOneKey(TensorRef tensor, int64_t axis,
                                             std::string &why) const {
  std::string_view key = tensor.key();
  int64_t rank = static_cast<int64_t>(tensor.ndim());
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    why = "axis " + std::to_string(axis) + " is out of range for '" +
          std::string(key) + "' of rank " + std::to_string(rank);
    return std::nullopt;
  }
  // (Inline: this runs for every fused statement's keys, and a key has a
  // shard per tensor-parallel rank or a few more.)
  llvm::SmallVector<std::pair<int64_t, int64_t>, 16> intervals;
  for (ShardRef shard : tensor.shards()) {
    int64_t begin = shard.globalOffset()[normalized];
    intervals.emplace_back(begin, begin + shard.localShape()[normalized]);
  }
  std::sort(intervals.begin(), intervals.end());
  intervals.erase(std::unique(intervals.begin(), intervals.end()),
                  intervals.end());
  int64_t extent = tensor.globalShape()[normalized];
  if (intervals.empty()) { // (metadata gives every tensor a shard)
    why = "'" + std::string(key) + "' has no shard";
    return std::nullopt;
  }
  int64_t size = intervals.front().second - intervals.front().first;
  int64_t expectedBegin = 0;
  bool even = size > 0;
  for (const auto &[begin, end] : intervals) {
    even &= begin == expectedBegin && end - begin == size;
    expectedBegin = end;
  }
  even &= expectedBegin == extent;
  if (!even) {
    std::string list;
    for (const auto &[begin, end] : intervals)
      list += (list.empty() ? "" : ", ") + std::string("[") +
              std::to_string(begin) + ":" + std::to_string(end) + ")";
    why = "the shards of '" + std::string(key) + "' cover " + list +
          " of [0:" + std::to_string(extent) + ") on axis " +
          std::to_string(normalized) + ", not an even split";
    return std::nullopt;
  }
  return static_cast<int64_t>(intervals.size());
}

std::optional<int64_t> KeySpace::shardCountAlongAxis(std::string_view name,
                                                     int64_t axis,
                                                     std::string &why) const {
  if (!metadata_) {
    why = "no " + sideName_ + " metadata";
    return std::nullopt;
  }
  const StoredForms *tensors = findModelKey(name);
  if (!tensors) {
    std::optional<TensorRef> tensor = metadata_->find(name);
    if (!tensor) {
      why = "'" + std::string(name) + "' is not in the " + sideName_ +
            " metadata";
      return std::nullopt;
    }
    return countOneKey(*tensor, axis, why);
  }
  // A model key and its states sharded like it must agree.
  std::optional<int64_t> agreed;
  std::string_view agreedKey;
  for (size_t i = 0; i < kShardedLikeKey; ++i) {
    TensorId id = (*tensors)[i];
    if (id == kNoTensor)
      continue;
    TensorRef tensor = metadata_->tensor(id);
    std::optional<int64_t> count = countOneKey(tensor, axis, why);
    if (!count)
      return std::nullopt;
    if (agreed && *agreed != *count) {
      why = "'" + std::string(agreedKey) + "' has " + std::to_string(*agreed) +
            " shards but '" + std::string(tensor.key()) + "' has " +
            std::to_string(*count);
      return std::nullopt;
    }
    agreed = count;
    agreedKey = tensor.key();
  }
  if (!agreed) {
    why = "'" + std::string(name) + "' has no stored tensor";
    return std::nullopt;
  }
  return agreed;
}

} // namespace aoa
