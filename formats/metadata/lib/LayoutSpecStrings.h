//===- LayoutSpecStrings.h - Layout spec fields and hints -------*- C++ -*-===//
#ifndef AOA_FORMATS_METADATA_LIB_LAYOUTSPECSTRINGS_H
#define AOA_FORMATS_METADATA_LIB_LAYOUTSPECSTRINGS_H

#include "aoa/ir/ShardMetadata.h"

#include <cstddef>
#include <string>
#include <vector>

namespace aoa {

namespace layoutspec {

/// ShardMetadata stores at most this many dimensions.
constexpr size_t kMaxDims = kDimensionLimit;
/// Mesh definitions nest process ids no deeper than this.
constexpr size_t kMaxMeshDims = 32;

inline constexpr const char *kSpecHint =
    "a layout spec looks like {\"format\": \"aoa-layout\", \"version\": 1, "
    "\"mesh\": {\"shape\": [2, 4]}, \"tensors\": {KEY: {\"dtype\": "
    "\"bfloat16\", \"global_shape\": [1024, 512], \"dims_mapping\": [-1, 1]}}}";
inline constexpr const char *kMeshHint =
    "a mesh looks like {\"shape\": [2, 4], \"dim_names\": [\"dp\", \"mp\"]} "
    "or {\"process_mesh\": [[0, 1], [2, 3]]}";
inline constexpr const char *kPlacementHint =
    "one entry per tensor dimension: a mesh axis number or name, -1 (or "
    "\"None\", null) when not split, or a list of axes";
inline constexpr const char *kRuleHint =
    "a rule looks like {\"match\": \"model.layers.$LAYER_ID.mlp.down_proj."
    "weight\", \"dims_mapping\": [-1, \"tp\"]}; \"regex\" instead of "
    "\"match\", and \"replicate\": true or \"flat\": AXIS instead of "
    "\"dims_mapping\", are the other spellings";
inline constexpr const char *kDefaultFilePattern = "rank{rank:05d}.safetensors";

// Field names, in the order they are usually written (function-local
// statics: no static constructors).
inline const std::vector<std::string> &rootFields() {
  static const std::vector<std::string> fields = {
      "format",           "version", "mesh",    "meshes",  "file_pattern",
      "optimizer_states", "stages",  "experts", "tensors", "rules",
      "default"};
  return fields;
}
inline const std::vector<std::string> &meshFields() {
  static const std::vector<std::string> fields = {
      "shape",     "device_matrix", "process_mesh",
      "dim_names", "alias_name",    "process_ids"};
  return fields;
}
inline const std::vector<std::string> &tensorFields() {
  static const std::vector<std::string> fields = {
      "dtype", "global_shape", "dims_mapping", "tensor_map",
      "mesh",  "select",       "replicate",    "flat"};
  return fields;
}
inline const std::vector<std::string> &ruleFields() {
  static const std::vector<std::string> fields = {
      "match",  "regex",     "dims_mapping", "tensor_map", "mesh",
      "select", "replicate", "flat",         "optional"};
  return fields;
}
inline const std::vector<std::string> &defaultFields() {
  static const std::vector<std::string> fields = {
      "dims_mapping", "tensor_map", "mesh", "select", "replicate", "flat"};
  return fields;
}

} // namespace layoutspec

} // namespace aoa

#endif // AOA_FORMATS_METADATA_LIB_LAYOUTSPECSTRINGS_H
