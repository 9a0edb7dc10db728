//===- BoxOverlap.cpp -----------------------------------------------------===//
#include "aoa/ir/BoxOverlap.h"

#include <algorithm>

namespace aoa {

std::optional<Box> findOverlap(std::vector<const Box *> &boxes) {
  // Empty boxes hold no elements.
  boxes.erase(std::remove_if(boxes.begin(), boxes.end(),
                             [](const Box *box) { return box->isEmpty(); }),
              boxes.end());
  if (boxes.size() < 2)
    return std::nullopt;
  if (boxes.front()->rank() == 0)
    return *boxes.front();
  std::sort(boxes.begin(), boxes.end(), [](const Box *a, const Box *b) {
    return a->dim(0).begin < b->dim(0).begin;
  });
  std::vector<const Box *> active;
  for (const Box *box : boxes) {
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](const Box *other) {
                                  return other->dim(0).end <= box->dim(0).begin;
                                }),
                 active.end());
    for (const Box *other : active)
      if (std::optional<Box> common = intersect(*box, *other))
        return common;
    active.push_back(box);
  }
  return std::nullopt;
}

} // namespace aoa
