//===- SourceLayoutCheck.h - Is SRC the layout a plan was compiled for? -*- C++ -*-===//
//
// A binary plan records the hash of the source layout it was compiled from
// (formats/plan/LayoutHash.h). aoa-run reads the source directory's
// metadata.json as the compiler reads it and refuses a directory of another
// layout before any byte moves: the same file and tensor names with the
// shards elsewhere in their keys would otherwise pass every per-file check
// and convert into wrong bytes.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_SOURCELAYOUTCHECK_H
#define AOA_DRIVER_SOURCELAYOUTCHECK_H

#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/runtime/support/Error.h"

#include <string>

namespace aoa {

/// An error when `origin` records a source layout hash and the directory's
/// metadata.json, when it has one that can be read, describes a layout of
/// another hash; success otherwise (a text plan records none; a scanned
/// directory, whose keys are whole tensors of its files' headers, and a
/// metadata.json that cannot be read are left to the run's own checks of
/// every source file).
runtime::Status checkSourceLayout(const std::string &planPath,
                                  const binplan::PlanOrigin &origin,
                                  const std::string &sourceDirectory);

} // namespace aoa

#endif // AOA_DRIVER_SOURCELAYOUTCHECK_H
