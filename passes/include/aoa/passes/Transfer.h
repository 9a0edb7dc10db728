//===- Transfer.h - One region from a stored source to a destination -*- C++ -*-===//
//
// resolve-shard-sources binds every piece of every destination shard to a
// stored source shard: a Transfer moves region `sourceRegion` (source key
// coordinates) of a plan source tensor into region `destinationRegion`
// (destination key coordinates) of a plan destination tensor, through a
// transform. schedule packs transfers into rounds of a Plan.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_TRANSFER_H
#define AOA_PASSES_TRANSFER_H

#include "aoa/ir/Box.h"
#include "aoa/ir/Plan.h"

#include <cstdint>
#include <vector>

namespace aoa {

struct Transfer {
  uint32_t sourceTensor = 0;      ///< into Plan::sourceTensors
  uint32_t destinationTensor = 0; ///< into Plan::destinationTensors
  uint32_t sourceRank = 0;        ///< reads it
  uint32_t destinationRank = 0;   ///< writes it
  /// Into CompilationState::transforms; 0 is the empty transform.
  uint32_t transform = 0;
  // (The 32-bit fields first, so that none is padded: a compile holds
  // millions of transfers.)
  Box sourceRegion;
  Box destinationRegion;
};

/// The distinct transforms of a conversion (a few per conversion).
/// (The plan keeps the same table: copy instructions name its ids.)
using TransformTable = plan::TransformTable;

} // namespace aoa

#endif // AOA_PASSES_TRANSFER_H
