//===- BoxOverlap.cpp -----------------------------------------------------===//
#include "aoa/ir/BoxOverlap.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace aoa {

std::optional<std::pair<size_t, size_t>>
findOverlappingPair(const std::vector<const Box *> &boxes) {
  // Empty boxes hold no elements.
  std::vector<size_t> order;
  order.reserve(boxes.size());
  for (size_t i = 0; i < boxes.size(); ++i)
    if (!boxes[i]->isEmpty())
      order.push_back(i);
  if (order.size() < 2)
    return std::nullopt;
  if (boxes[order[0]]->rank() == 0)
    return std::make_pair(order[0], order[1]);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return boxes[a]->dim(0).begin < boxes[b]->dim(0).begin;
  });
  std::vector<size_t> active;
  for (size_t i : order) {
    const Box &box = *boxes[i];
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](size_t j) {
                                  return boxes[j]->dim(0).end <=
                                         box.dim(0).begin;
                                }),
                 active.end());
    for (size_t j : active)
      if (intersect(box, *boxes[j]))
        return std::make_pair(j, i);
    active.push_back(i);
  }
  return std::nullopt;
}

std::optional<Box> findOverlap(const std::vector<const Box *> &boxes) {
  std::optional<std::pair<size_t, size_t>> pair = findOverlappingPair(boxes);
  if (!pair)
    return std::nullopt;
  return intersect(*boxes[pair->first], *boxes[pair->second]);
}

void sortAndRemoveDuplicates(std::vector<Box> &boxes) {
  auto before = [](const Box &a, const Box &b) {
    return std::lexicographical_compare(
        a.dims().begin(), a.dims().end(), b.dims().begin(), b.dims().end(),
        [](const Interval &x, const Interval &y) {
          return std::tie(x.begin, x.end) < std::tie(y.begin, y.end);
        });
  };
  std::sort(boxes.begin(), boxes.end(), before);
  boxes.erase(std::unique(boxes.begin(), boxes.end()), boxes.end());
}

} // namespace aoa
