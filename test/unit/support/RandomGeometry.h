//===- RandomGeometry.h - Random values for property tests -----*- C++ -*-===//
#ifndef AOA_TEST_UNIT_RANDOMGEOMETRY_H
#define AOA_TEST_UNIT_RANDOMGEOMETRY_H

#include "aoa/ir/Permutation.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace aoa::test {

/// A uniformly random permutation of `rank` axes.
template <typename Engine>
Permutation randomPermutation(Engine &rng, size_t rank) {
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  std::shuffle(axes.begin(), axes.end(), rng);
  return *Permutation::fromAxes(axes, rank);
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_RANDOMGEOMETRY_H
