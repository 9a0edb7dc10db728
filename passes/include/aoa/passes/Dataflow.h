//===- Dataflow.h - Values, inputs and outputs of a conversion --*- C++ -*-===//
//
// What propagate-shapes computes: the input tensors the ops read (source
// keys), the view every name holds after the last op, which destination
// names the ops assigned, and which keys were removed or added.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_DATAFLOW_H
#define AOA_PASSES_DATAFLOW_H

#include "aoa/ir/Op.h"
#include "aoa/ir/View.h"
#include "aoa/passes/KeySpace.h"
#include "aoa/passes/NamedValueTable.h"
#include "aoa/passes/TargetTable.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

/// A source tensor the ops read: a model key (its optimizer states follow
/// it) or a stored key named explicitly, e.g. `k.moment1_0`.
struct InputTensor {
  std::string key;
  /// The stored tensors `key` + suffix names (KeySpace::storedForms): the
  /// sources of the destination keys and states that follow it.
  KeySpace::StoredForms stored;
  TensorType type;
  /// Its one-piece view: the whole tensor, untransformed.
  ViewRef view;
  /// `key -> _`: every answer drops the pieces it provides.
  bool removed = false;
  size_t removedBy = kNoOp;

  /// The tensor of `source` stored as `key` + `suffix`, if any: by index
  /// for the suffixes of `stored`, by text for any other.
  std::optional<TensorRef> storedAs(const ShardMetadata &source,
                                    std::string_view suffix) const;
};

struct Dataflow {
  std::vector<InputTensor> inputs;
  /// The inputs' keys; a key's id here is its input's.
  StringPool inputKeys;
  /// Reads of each input, for leaves without a destination layout.
  std::vector<uint32_t> inputUses;
  /// The inputs' untransformed pieces' transform, by rank.
  std::vector<std::shared_ptr<const Transform>> identityTransforms;
  /// Names assigned by ops (user intermediates, temporaries, destination
  /// names), holding their latest value.
  NamedValueTable values;
  /// Destination names (model keys or stored keys of the destination) that an
  /// op assigned, with their value (never temporaries). Unlike `values`, a
  /// failed op does not overwrite them.
  NamedValueTable outputs;
  /// `_ -> key`: the op that added it.
  std::map<std::string, size_t> added;

  /// Bindings of every destination key (and every --queries key), or of
  /// the derived outputs without a destination layout (resolve-outputs).
  /// resolve-shard-sources erases each as it leaves its key, so that the
  /// views are freed while the plan grows (after releaseValues, the
  /// targets hold the only references to them).
  TargetTable targets;

  const InputTensor &input(uint32_t id) const { return inputs[id]; }

  /// Frees the named values and outputs, which nothing reads once
  /// resolve-outputs has bound the targets (a plan compile, before
  /// resolve-shard-sources).
  void releaseValues() {
    values = {};
    outputs = {};
  }

  /// The input for source key `key`, created on first use: a model key
  /// (shape and dtype from the key, or from its first optimizer state when
  /// only states are stored) or any stored key. nullopt when the source has
  /// no such key.
  std::optional<uint32_t> inputFor(const KeySpace &source,
                                   const std::string &key);
};

} // namespace aoa

#endif // AOA_PASSES_DATAFLOW_H
