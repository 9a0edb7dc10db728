//===- AxisTrace.h - Which key axes an axis of a name comes from -*- C++
//-*-===//
//
// The fused macros count a tensor's shards along the fused axis. When the
// fused name is a key permuted or reshaped by earlier statements (`A^T ->
// tmp; tmp -> D, fused_ffn`), that axis is another axis of the stored key
// (or several, merged by a reshape). A trace follows a chain walk's steps
// from the key to the name and says, for every axis of the name, which key
// axes it is made of.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_AXISTRACE_H
#define AOA_PASSES_AXISTRACE_H

#include "aoa/passes/VarMappingChain.h"

#include <optional>
#include <string>
#include <vector>

namespace aoa {

/// The step `X^T` stands for: `permute="[]"`, all axes reversed.
AxisStep reverseAllAxes(SourceLocation location);

/// Where one axis of a name comes from in the key a walk reached.
struct AxisOrigin {
  /// The key axes that make it up, outer first: one for a permuted axis,
  /// several for axes a reshape merged.
  std::vector<unsigned> keyAxes;
  /// Set when a reshape cut the axis out of a larger one (keyAxes is then
  /// empty): its shards along it cannot be told from the key's.
  std::optional<SourceLocation> cutBy;
};

struct AxisTraceError {
  std::string message;
  SourceLocation location; ///< of the step that could not be followed
};

/// The origin of every axis of the walk's start, from the reached key's
/// rank; nullopt with `error` set when a step does not fit the rank there
/// (the statement is also wrong, and build-ops reports it).
std::optional<std::vector<AxisOrigin>>
traceAxes(const ChainWalk &walk, size_t keyRank, AxisTraceError &error);

/// "axis 0 of 'A'", "axes 0 and 1 of 'A'", for messages.
std::string describeKeyAxes(const std::vector<unsigned> &axes,
                            const std::string &key);

} // namespace aoa

#endif // AOA_PASSES_AXISTRACE_H
