//===- NamedValueTable.h - The values names hold, by name -------*- C++ -*-===//
//
// propagate-shapes assigns a value to every result of every op: a large
// model's fused statements alone name hundreds of thousands of temporaries,
// almost all new. A node-based hash map spent two or three cache misses on
// each new name (the bucket, the node before it, the chain); StringPool's
// open-addressed slots of (hash, id) cost one, and compare bytes only where
// the hashes agree.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_NAMEDVALUETABLE_H
#define AOA_PASSES_NAMEDVALUETABLE_H

#include "aoa/ir/Op.h"
#include "aoa/ir/ShardMetadata.h" // StringPool
#include "aoa/ir/View.h"
#include "aoa/passes/TargetTable.h" // kNoOp

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace aoa {

/// The value a name holds, with the op that made it and how often later ops
/// read it (names nothing reads are the outputs when there is no
/// destination layout).
struct NamedValue {
  ViewRef view;
  size_t producer = kNoOp;
  uint32_t uses = 0;
};

/// A name as NamedValueTable looks it up: a view of its text, and whether
/// it is a temporary.
struct ValueNameRef {
  std::string_view text;
  bool temporary = false;

  ValueNameRef(const ValueName &name)
      : text(name.text), temporary(name.temporary) {}
  ValueNameRef(std::string_view text, bool temporary)
      : text(text), temporary(temporary) {}
};

/// The names' values, found by name. Temporaries and keys are interned in
/// a StringPool each (a temporary and a key may share their text), with the
/// values in vectors by the pools' dense ids.
class NamedValueTable {
public:
  /// Room for this many names of each kind, and bytes of their text,
  /// without growing.
  void reserve(size_t keys, size_t keyBytes, size_t temporaries,
               size_t temporaryBytes);

  /// The value `name` holds, or nullptr.
  NamedValue *find(const ValueNameRef &name);
  const NamedValue *find(const ValueNameRef &name) const;
  bool contains(const ValueNameRef &name) const {
    return find(name) != nullptr;
  }

  /// A hint that `name` is looked up or assigned soon (StringPool::prefetch).
  void prefetch(const ValueNameRef &name) const {
    names_[name.temporary].prefetch(name.text);
  }

  /// Gives `name` the value `value`, replacing any it held.
  void assign(const ValueNameRef &name, NamedValue value);

  /// Calls `fn(text, value)` for every name that is not a temporary, in the
  /// order they were first assigned.
  template <typename Fn> void forEachKey(Fn fn) const {
    for (uint32_t id = 0; id < names_[0].size(); ++id)
      fn(names_[0].get(id), values_[0][id]);
  }

private:
  /// [0]: keys and user names; [1]: temporaries.
  StringPool names_[2];
  std::vector<NamedValue> values_[2];
};

} // namespace aoa

#endif // AOA_PASSES_NAMEDVALUETABLE_H
