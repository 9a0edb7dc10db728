//===- BruteForce.h - Element-by-element model for geometry tests -*- C++ -*-===//
//
// The randomized tests compare the box algebra against this plain odometer,
// which shares no code with the library.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_BRUTEFORCE_H
#define AOA_TEST_UNIT_BRUTEFORCE_H

#include "aoa/ir/Box.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace aoa::test {

using Point = std::vector<int64_t>;

/// Calls `visit` for every point of `box` in row-major (lexicographic) order.
/// Independent of the library: a plain odometer.
inline void forEachPoint(const Box &box,
                  const std::function<void(const Point &)> &visit) {
  if (box.isEmpty())
    return;
  Point p(box.rank());
  for (size_t i = 0; i < box.rank(); ++i)
    p[i] = box.dim(i).begin;
  while (true) {
    visit(p);
    size_t i = box.rank();
    while (i > 0) {
      --i;
      if (++p[i] < box.dim(i).end)
        break;
      p[i] = box.dim(i).begin;
      if (i == 0)
        return;
    }
    if (box.rank() == 0)
      return;
  }
}

} // namespace aoa::test

#endif
