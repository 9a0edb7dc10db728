//===- KeySpace.h - The keys of one side of a conversion --------*- C++ -*-===//
//
// Macros need to know which keys exist on the source side (and on the
// destination side, when a destination layout is given) and how a key is
// sharded along an axis. A KeySpace answers both from shard metadata.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_KEYSPACE_H
#define AOA_PASSES_KEYSPACE_H

#include "aoa/ir/OptimizerState.h"
#include "aoa/ir/ShardMetadata.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

class KeySpace {
public:
  /// An absent side (no destination layout given).
  KeySpace() = default;
  /// `path` names the metadata file in messages.
  KeySpace(const ShardMetadata &metadata, std::string sideName,
           std::string path = "");

  bool present() const { return metadata_ != nullptr; }
  /// "source" or "destination", for messages.
  const std::string &sideName() const { return sideName_; }
  /// "the destination layout 'dst.json'", for messages.
  std::string describe() const {
    return "the " + sideName_ + (path_.empty() ? "" : " '" + path_ + "'");
  }
  const ShardMetadata *metadata() const { return metadata_; }

  /// Every name a statement may use for this side, sorted: the model keys
  /// (optimizer suffixes stripped) and the stored keys themselves. Views of
  /// the metadata's interned keys, like everything a KeySpace holds: the
  /// metadata must outlive it.
  const std::vector<std::string_view> &names() const { return names_; }
  /// Model keys only, sorted.
  const std::vector<std::string_view> &modelKeys() const { return modelKeys_; }
  bool contains(std::string_view name) const;
  bool isModelKey(std::string_view name) const {
    return modelKeyTensors_.count(llvm::StringRef(name)) != 0;
  }
  bool isStoredKey(std::string_view key) const;

  /// The stored tensors `name` + suffix names, for the empty suffix and
  /// each of kOptimizerSuffixes, in that order (storedFormIndex); kNoTensor
  /// where there is none. The first kShardedLikeKey are the key and the
  /// states sharded like it; the beta-pow accumulators, scalars, follow.
  /// Looked up once for all: a model key's when the key space is built.
  static constexpr TensorId kNoTensor = UINT32_MAX;
  static constexpr size_t kShardedLikeKey = 4;
  using StoredForms = std::array<TensorId, 1 + std::size(kOptimizerSuffixes)>;
  StoredForms storedForms(std::string_view name) const;
  /// The index of `suffix` in StoredForms; nullopt for a suffix that is
  /// not an optimizer state's.
  static std::optional<size_t> storedFormIndex(std::string_view suffix);

  /// The tensor that stands for `name`: the stored key itself, or for a
  /// model key its first stored state sharded like it (.w_0, .moment1_0,
  /// .moment2_0); nullopt if none.
  std::optional<TensorRef> representative(std::string_view name) const;
  /// representative() of names whose storedForms are known.
  std::optional<TensorRef> representative(const StoredForms &forms) const;
  /// The rank of representative(name); nullopt if none.
  std::optional<size_t> rankOf(std::string_view name) const;

  /// The number of shards of `name` along `axis`: the distinct intervals of
  /// its shards on that axis (replicas and sharding along other axes do not
  /// count). For a model key, the key and its optimizer states that are
  /// sharded like it (.w_0, .moment1_0, .moment2_0) must agree. The intervals
  /// must tile the axis evenly; otherwise `why` says what is wrong.
  std::optional<int64_t> shardCountAlongAxis(std::string_view name, int64_t axis,
                                             std::string &why) const;

private:
  /// A model key's stored forms, looked up once when the key space is
  /// built (fused macros ask for tens of thousands of keys, each a few
  /// times, and every answer for its source).
  const StoredForms *findModelKey(std::string_view name) const {
    auto it = modelKeyTensors_.find(llvm::StringRef(name));
    return it == modelKeyTensors_.end() ? nullptr : &it->second;
  }

  std::optional<int64_t> countOneKey(TensorRef tensor, int64_t axis,
                                     std::string &why) const;

  const ShardMetadata *metadata_ = nullptr;
  std::string sideName_;
  std::string path_;
  std::vector<std::string_view> names_;
  std::vector<std::string_view> modelKeys_;
  /// (Open addressing: a lookup is a probe of one array, where a node-based
  /// map chased a bucket and a node.)
  llvm::DenseMap<llvm::StringRef, StoredForms> modelKeyTensors_;
};

} // namespace aoa

#endif // AOA_PASSES_KEYSPACE_H
