//===- TargetTable.h - How each target key is answered ----------*- C++ -*-===//
//
// resolve-outputs binds every target key (a destination key, a --queries key,
// or a name derived without a destination layout) to the view that answers
// it; find-shard-sources and resolve-shard-sources read the bindings back
// while they walk the destination's tensors.
//
// A large model has hundreds of thousands of destination keys, and those
// walks look one up per tensor: destination keys are kept in a vector by
// their TensorId in the destination metadata, so a walk finds its tensor's
// binding without hashing or copying the key. The few other targets (a
// queried optimizer state the destination does not list; every target when
// there is no destination metadata) are kept by name.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_TARGETTABLE_H
#define AOA_PASSES_TARGETTABLE_H

#include "aoa/ir/ShardMetadata.h"
#include "aoa/ir/View.h"

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aoa {

constexpr size_t kNoOp = std::numeric_limits<size_t>::max();

/// How a target key (a destination key, or a name derived without a
/// destination layout) is answered.
struct TargetBinding {
  enum class Kind {
    Assigned, ///< a statement wrote it (or the model key it is a state of)
    Identity, ///< no statement wrote it: the same-named source key
    Added,    ///< `_ -> key`: nothing to load
    Missing,  ///< none of the above (an error was reported)
  };
  Kind kind = Kind::Missing;
  ViewRef view;
  /// The optimizer suffix re-attached to every source key of the view
  /// (`.moment1_0` when the view belongs to the model key).
  std::string suffix;
  /// Assigned: the op that wrote the view.
  size_t producer = kNoOp;
};

/// The bindings of the target keys. Pointers to a binding stay valid until
/// it is erased or the table is reset; erasing the bindings of different
/// destination tensors from different threads is safe (each is its own
/// slot), as is reading one binding while another is erased.
class TargetTable {
public:
  /// Empties the table. The keys of `destination` (null: none) will be
  /// kept by TensorId; it must outlive the table's use.
  void reset(const ShardMetadata *destination);

  /// Binds `key` unless it is bound already; false when it was.
  bool insert(std::string_view key, TargetBinding binding);
  /// The same for the key of tensor `tensor` of `metadata`.
  bool insert(const ShardMetadata &metadata, TensorId tensor,
              TargetBinding binding);

  /// The binding of `key`; null when it has none.
  const TargetBinding *find(std::string_view key) const;
  /// The binding of tensor `tensor` of `metadata` (by its id when
  /// `metadata` is the destination the table was reset with, else by key).
  const TargetBinding *find(const ShardMetadata &metadata,
                            TensorId tensor) const;

  /// Drops the binding of tensor `tensor` of `metadata`, if any, so that its
  /// view is freed once nothing else holds it.
  void erase(const ShardMetadata &metadata, TensorId tensor);

  /// How many keys are bound (counts them: for tests and printing).
  size_t size() const;
  /// Every bound key with its binding, in byte order of the keys.
  std::vector<std::pair<std::string_view, const TargetBinding *>>
  sorted() const;

private:
  bool byId(const ShardMetadata &metadata) const {
    return destination_ == &metadata;
  }

  const ShardMetadata *destination_ = nullptr;
  /// By destination TensorId; null when the key is not bound. Each binding
  /// is an allocation of its own, so that the memory of those that
  /// resolve-shard-sources erases goes back while the plan grows (a vector
  /// of the bindings themselves stays whole to the end: +16 MiB of peak on
  /// the DeepSeek-V3 bench).
  std::vector<std::unique_ptr<TargetBinding>> byTensor_;
  std::unordered_map<std::string, TargetBinding> byName_;
};

} // namespace aoa

#endif // AOA_PASSES_TARGETTABLE_H
