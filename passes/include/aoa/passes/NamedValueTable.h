//===- NamedValueTable.h - The values names hold, by name -------*- C++ -*-===//
//
// propagate-shapes assigns a value to every result of every op: a large
// model's fused statements alone name hundreds of thousands of temporaries,
// almost all new. A node-based hash map spends two or three cache misses on
// each new name (the bucket, the node before it, the chain); this table
// keeps a hash tag and an index per slot, open addressed, so a new name
// costs one miss and an existing one two. Entries stay in insertion order,
// which is also the order iteration gives.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_NAMEDVALUETABLE_H
#define AOA_PASSES_NAMEDVALUETABLE_H

#include "aoa/ir/Op.h"
#include "aoa/ir/View.h"
#include "aoa/passes/TargetTable.h" // kNoOp

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
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

/// A name as NamedValueTable keys it: a view of the text of an op's
/// operand or result (the ops outlive the table: Dataflow::releaseValues
/// frees it first), so that the names are not copied.
struct ValueNameRef {
  std::string_view text;
  bool temporary = false;

  ValueNameRef(const ValueName &name)
      : text(name.text), temporary(name.temporary) {}
  ValueNameRef(std::string_view text, bool temporary)
      : text(text), temporary(temporary) {}

  friend bool operator==(const ValueNameRef &a, const ValueNameRef &b) {
    return a.temporary == b.temporary && a.text == b.text;
  }
};

class NamedValueTable {
public:
  using Entry = std::pair<ValueNameRef, NamedValue>;

  /// Room for `count` names without growing.
  void reserve(size_t count);

  /// The value `name` holds, or nullptr.
  NamedValue *find(const ValueNameRef &name) {
    uint32_t index = indexOf(name);
    return index == kNone ? nullptr : &entries_[index].second;
  }
  const NamedValue *find(const ValueNameRef &name) const {
    uint32_t index = indexOf(name);
    return index == kNone ? nullptr : &entries_[index].second;
  }
  bool contains(const ValueNameRef &name) const {
    return indexOf(name) != kNone;
  }

  /// Gives `name` the value `value`, replacing any it held (its place in
  /// the iteration order stays where the name was first assigned).
  void assign(const ValueNameRef &name, NamedValue value);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }

private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint64_t kTagMask = 0xffffffff00000000u;
  static uint64_t hash(const ValueNameRef &name);
  /// A slot: the hash's upper 32 bits (its tag) and the entry's index + 1;
  /// 0 is empty.
  static uint64_t slotFor(uint64_t hash, uint32_t index) {
    return (hash & kTagMask) | (uint64_t(index) + 1);
  }
  /// The slot that holds `name` (hash `h`), or the empty one it would take;
  /// entries are compared only where the tags agree.
  size_t slotOf(const ValueNameRef &name, uint64_t h) const;
  uint32_t indexOf(const ValueNameRef &name) const;
  /// Sizes the slots for `count` names at most half full and re-enters
  /// every entry.
  void rehash(size_t count);

  std::vector<uint64_t> slots_; ///< a power of two of them, or none
  std::vector<Entry> entries_;
};

} // namespace aoa

#endif // AOA_PASSES_NAMEDVALUETABLE_H
