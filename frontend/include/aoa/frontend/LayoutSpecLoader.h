//===- LayoutSpecLoader.h - Shard metadata from a mesh layout ---*- C++ -*-===//
//
// Reads a layout spec (docs/layouts.md): a device mesh, and per tensor its
// dtype, global shape and placement, written as Paddle's dims_mapping or
// MindSpore's tensor_map, optionally on a named or selected sub-mesh (pipeline
// stages, expert groups):
//
//   {"format": "aoa-layout", "version": 1,
//    "mesh": {"shape": [2, 4], "dim_names": ["dp", "mp"]},
//    "file_pattern": "rank{rank:05d}.safetensors",
//    "tensors": {"w": {"dtype": "bfloat16", "global_shape": [1024, 512],
//                      "dims_mapping": [-1, 1]}}}
//
// and expands it (MeshLayout.h) into shard metadata: for every tensor, one
// shard per process of its mesh, in rank order, stored in that rank's file
// under the tensor's key. Every problem is a diagnostic located at the
// offending JSON value, with a hint; loading continues to the next tensor and
// stops after 20 errors.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FRONTEND_LAYOUTSPECLOADER_H
#define AOA_FRONTEND_LAYOUTSPECLOADER_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/ShardMetadata.h"

#include <optional>
#include <string>

namespace aoa {

/// Reads, validates and expands the spec at `path`; on any error reports it
/// and returns nullopt.
std::optional<ShardMetadata> loadLayoutSpec(const std::string &path,
                                            SourceManager &sources,
                                            DiagnosticEngine &diags);

/// As loadLayoutSpec, for text already in memory; `path` names it in
/// diagnostics.
std::optional<ShardMetadata> loadLayoutSpecText(const std::string &path,
                                                std::string text,
                                                SourceManager &sources,
                                                DiagnosticEngine &diags);

} // namespace aoa

#endif // AOA_FRONTEND_LAYOUTSPECLOADER_H
