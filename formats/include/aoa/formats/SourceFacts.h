//===- SourceFacts.h - What a plan expects of its source files --*- C++ -*-===//
//
// A plan compiled from a checkpoint directory (the compiler read its
// safetensors headers) records what it found: every source file's size and
// the data offsets of every source tensor (plan-format.md, version 3).
// aoa-run compares them with the files before any data moves, so a file
// replaced, rewritten, truncated or appended to between compile and run is
// refused, naming the file and what changed (runtime SourceFiles.h).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_SOURCEFACTS_H
#define AOA_FORMATS_SOURCEFACTS_H

#include "aoa/ir/Plan.h"
#include "aoa/runtime/support/Error.h"

#include <string>

namespace aoa::formats {

/// Opens every source file of `plan` under `directory` (headers only) and
/// records its size and the data offsets of the plan's tensors in it. Fails,
/// naming the file or tensor, when one cannot be read or lacks a tensor.
runtime::Status recordSourceFacts(plan::Plan &plan,
                                  const std::string &directory);

} // namespace aoa::formats

#endif // AOA_FORMATS_SOURCEFACTS_H
