//===- NamedValueTable.cpp -------------------------------------------------===//
#include "aoa/passes/NamedValueTable.h"

#include <algorithm>
#include <functional>

namespace aoa {

uint64_t NamedValueTable::hash(const ValueNameRef &name) {
  uint64_t h = std::hash<std::string_view>()(name.text);
  // A temporary and a key may share their text: they are different names.
  return name.temporary ? h ^ 0x9e3779b97f4a7c15u : h;
}

size_t NamedValueTable::slotOf(const ValueNameRef &name, uint64_t h) const {
  uint64_t tag = h & kTagMask;
  size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (; slots_[i] != 0; i = (i + 1) & mask)
    if ((slots_[i] & kTagMask) == tag &&
        entries_[static_cast<uint32_t>(slots_[i]) - 1].first == name)
      break;
  return i;
}

uint32_t NamedValueTable::indexOf(const ValueNameRef &name) const {
  if (slots_.empty())
    return kNone;
  uint64_t slot = slots_[slotOf(name, hash(name))];
  return slot == 0 ? kNone : static_cast<uint32_t>(slot) - 1;
}

void NamedValueTable::reserve(size_t count) {
  if (count * 2 > slots_.size())
    rehash(count);
  entries_.reserve(count);
}

void NamedValueTable::rehash(size_t count) {
  size_t capacity = 16;
  while (capacity < count * 2)
    capacity *= 2;
  slots_.assign(capacity, 0);
  size_t mask = capacity - 1;
  for (uint32_t index = 0; index < entries_.size(); ++index) {
    uint64_t h = hash(entries_[index].first);
    size_t i = h & mask;
    while (slots_[i] != 0)
      i = (i + 1) & mask;
    slots_[i] = slotFor(h, index);
  }
}

void NamedValueTable::assign(const ValueNameRef &name, NamedValue value) {
  if ((entries_.size() + 1) * 2 > slots_.size())
    rehash(std::max<size_t>(entries_.size() + 1, entries_.size() * 2));
  uint64_t h = hash(name);
  size_t i = slotOf(name, h);
  if (slots_[i] != 0) {
    entries_[static_cast<uint32_t>(slots_[i]) - 1].second = std::move(value);
    return;
  }
  uint32_t index = static_cast<uint32_t>(entries_.size());
  entries_.emplace_back(name, std::move(value));
  slots_[i] = slotFor(h, index);
}

} // namespace aoa
