//===- SafetensorsIndex.h - model.safetensors.index.json --------*- C++ -*-===//
//
// A Hugging Face sharded checkpoint names the file of every tensor in
// model.safetensors.index.json:
//
//   {"metadata": {"total_size": 16060522496},
//    "weight_map": {"lm_head.weight": "model-00004-of-00004.safetensors",
//                   ...}}
//
// Reading: weight_map is required (a string to string object); metadata and
// any other top-level field are optional and ignored except total_size,
// which is returned when it is a non-negative integer but never checked
// (publishers differ in what it sums). Ignored fields must still be JSON.
// Indexes of large MoE models exceed 20 MB, so the text is parsed with
// simdjson On-Demand, and the weight map comes back sorted by key with each
// file named once; a syntax error is located (line:column) by a second,
// slower parse.
//
// Writing: the text transformers writes, `json.dumps(index, indent=2,
// sort_keys=True) + "\n"` (keys in code point order, non-ASCII characters
// as \uXXXX), with total_size the sum of the tensors' bytes.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_SAFETENSORSINDEX_H
#define AOA_FORMATS_SAFETENSORSINDEX_H

#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aoa::formats {

struct SafetensorsIndex {
  /// One key of weight_map; its text is key(entry). (10^5 keys and more:
  /// they share one buffer instead of a string each.)
  struct Entry {
    uint64_t keyOffset = 0; ///< into keyBytes
    uint32_t keySize = 0;
    /// Into files.
    uint32_t file = 0;
  };
  /// The files weight_map names, each once, sorted: relative paths inside
  /// the index's directory (no absolute paths, no "..").
  std::vector<std::string> files;
  /// weight_map sorted by key (byte order); keys are unique.
  std::vector<Entry> weightMap;
  /// The keys' text, back to back.
  std::string keyBytes;
  /// metadata.total_size, when it is a non-negative integer.
  std::optional<uint64_t> totalSize;

  std::string_view key(const Entry &entry) const {
    return std::string_view(keyBytes).substr(entry.keyOffset, entry.keySize);
  }
};

/// Parses an index's text; `fileName` names it in errors, which say where
/// (FILE:LINE:COLUMN) and what: malformed JSON, no weight_map, a value that
/// is not a file name, a key given twice.
runtime::Expected<SafetensorsIndex>
parseSafetensorsIndex(std::string_view text, std::string_view fileName);

/// The index of `layout` as transformers writes it: weight_map from every
/// key to its file, metadata.total_size the sum of the tensors' bytes.
/// Every tensor must be stored whole, once, under its key (a Hugging Face
/// layout: HuggingFaceShards.h). The text is ir's formatHuggingFaceIndex,
/// which aoa-run also writes (ir/HuggingFaceIndex.h).
runtime::Expected<std::string>
formatSafetensorsIndex(const ShardMetadata &layout);

} // namespace aoa::formats

#endif // AOA_FORMATS_SAFETENSORSINDEX_H
