//===- EntryFacts.cpp - What binding reads of an answer's entry -----------===//
#include "EntryFacts.h"

#include <algorithm>

namespace aoa {

const std::vector<std::string> &
PostprocessLists::intern(const std::shared_ptr<const Transform> &transform) {
  if (transform == lastTransform_ && last_)
    return *last_;
  const std::vector<std::string> &list = intern(transform->postprocess);
  lastTransform_ = transform;
  return list;
}

const std::vector<std::string> &
PostprocessLists::intern(const std::vector<std::string> &list) {
  // Consecutive entries mostly share a list: the last one is tried first.
  if (last_ && *last_ == list)
    return *last_;
  auto known = std::find(lists_.begin(), lists_.end(), list);
  last_ = known != lists_.end() ? &*known : &lists_.emplace_back(list);
  lastTransform_.reset();
  return *last_;
}

} // namespace aoa
