//===- WriteCoverage.h - Every destination element written once -*- C++ -*-===//
//
// The plan reader checks that every write lies inside its stored tensor, but
// not that the writes cover each tensor exactly once (the compiler's verify
// pass does, before it writes a plan). A plan edited by hand, truncated or
// produced by another tool must not yield a file with a hole or a doubly
// written region, so the executor checks coverage itself before it starts:
// per destination tensor, the written volumes add up to the stored elements
// and no two written regions overlap (a sort and a sweep, BoxOverlap.h).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_WRITECOVERAGE_H
#define AOA_RUNTIME_WRITECOVERAGE_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/Error.h"

namespace aoa::runtime {

/// Fails, naming the file, the key and the element ranges, when a
/// destination tensor is not written exactly once element by element.
Status checkWriteCoverage(const plan::Plan &plan);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_WRITECOVERAGE_H
