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
// under the tensor's key.
//
// A spec may instead place the keys of a key list (a checkpoint's keys, or
// the outputs of statements) by ordered rules over key patterns
// (KeyPattern.h), first match wins, with pipeline stages and experts
// assigned from the `$LAYER_ID` / `$EXPERT_ID` a rule captures; dtypes and
// shapes then come from the key list, and the output lists its keys in its
// order.
//
// Every problem is a diagnostic located at the offending JSON value, with a
// hint; loading continues to the next tensor and stops after 20 errors.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_METADATA_LAYOUTSPECLOADER_H
#define AOA_FORMATS_METADATA_LAYOUTSPECLOADER_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/ShardMetadata.h"

#include <optional>
#include <string>
#include <vector>

namespace aoa {

/// A tensor a spec's rules place: its key, dtype and global shape.
struct LayoutKey {
  std::string key;
  DType dtype = DType::F32;
  std::vector<int64_t> globalShape;
};

/// The keys to place, in output order, and where they come from, for
/// messages ("the source 'meta.json'", "the outputs of 'model.aoa'").
struct LayoutKeyList {
  std::vector<LayoutKey> keys;
  std::string origin;
};

/// The tensors of `metadata` in its order (file order), as a key list.
LayoutKeyList layoutKeysOf(const ShardMetadata &metadata, std::string origin);

/// Reads, validates and expands the spec at `path`; on any error reports it
/// and returns nullopt. With `keys`, its keys are placed (by the spec's
/// `tensors` entries, then its rules), in its order, followed by `tensors`
/// entries for other keys; without it, the spec may have no rules.
std::optional<ShardMetadata>
loadLayoutSpec(const std::string &path, SourceManager &sources,
               DiagnosticEngine &diags, const LayoutKeyList *keys = nullptr);

/// As loadLayoutSpec, for text already in memory; `path` names it in
/// diagnostics.
std::optional<ShardMetadata>
loadLayoutSpecText(const std::string &path, std::string text,
                   SourceManager &sources, DiagnosticEngine &diags,
                   const LayoutKeyList *keys = nullptr);

} // namespace aoa

#endif // AOA_FORMATS_METADATA_LAYOUTSPECLOADER_H
