//===- Mapping.h - Answers of find_shard_sources ----------------*- C++ -*-===//
//
// The compatibility surface with Paddle (docs/compiler.md, "Answers"): for a target shard,
// the list of (target region, source region, postprocess) entries, printed as
// `{"mappings": [{"query": DESC, "entries": [...]}]}`.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_MAPPING_H
#define AOA_IR_MAPPING_H

#include "aoa/ir/Box.h"
#include "aoa/ir/DType.h"
#include "aoa/ir/Json.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

/// Paddle's ShardedWeightDesc: a region of one tensor.
struct TensorDesc {
  std::string key;
  std::vector<int64_t> globalOffset;
  std::vector<int64_t> localShape;
  std::vector<int64_t> globalShape;
  DType dtype = DType::F32;

  Box box() const { return Box(globalOffset, localShape); }
  /// Sets every field, reusing this object's memory (answers are produced
  /// by the million).
  void assign(std::string_view newKey, const Box &region,
              llvm::ArrayRef<int64_t> newGlobalShape, DType newDType);
};

struct MappingEntry {
  TensorDesc target;
  TensorDesc source;
  /// Applied to the source region in order, in canonical form (what plans
  /// parse).
  std::vector<std::string> postprocess;
  /// The same steps spelled as the statements wrote them (a permutation
  /// `'[1,0]'` stays "[1,0]"), as the reference answers: what the mappings
  /// document prints; empty prints as `null`.
  std::vector<std::string> postprocessAsWritten;
};

struct Mapping {
  TensorDesc query;
  std::vector<MappingEntry> entries;
};

/// Appends `{"key": …, "global_offset": […], "local_shape": […],
/// "global_shape": […], "dtype": "…"}`.
void appendTensorDescJson(std::string &out, const TensorDesc &desc);

/// Prints the mappings document, one entry per line. Streams: memory stays
/// proportional to one mapping, whatever the number of mappings.
class MappingsJsonWriter {
public:
  explicit MappingsJsonWriter(std::ostream &os);
  void write(const TensorDesc &query, llvm::ArrayRef<MappingEntry> entries);
  void write(const Mapping &mapping) { write(mapping.query, mapping.entries); }
  /// Closes the document; called by the destructor if not called before.
  void finish();
  ~MappingsJsonWriter();

private:
  std::ostream &os_;
  std::string buffer_;
  bool first_ = true;
  bool finished_ = false;
};

} // namespace aoa

#endif // AOA_IR_MAPPING_H
