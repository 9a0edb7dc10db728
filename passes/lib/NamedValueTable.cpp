//===- NamedValueTable.cpp -------------------------------------------------===//
#include "aoa/passes/NamedValueTable.h"

namespace aoa {

void NamedValueTable::reserve(size_t keys, size_t keyBytes,
                              size_t temporaries, size_t temporaryBytes) {
  names_[0].reserve(keys, keyBytes);
  values_[0].reserve(keys);
  names_[1].reserve(temporaries, temporaryBytes);
  values_[1].reserve(temporaries);
}

NamedValue *NamedValueTable::find(const ValueNameRef &name) {
  std::optional<uint32_t> id = names_[name.temporary].find(name.text);
  return id ? &values_[name.temporary][*id] : nullptr;
}

const NamedValue *NamedValueTable::find(const ValueNameRef &name) const {
  std::optional<uint32_t> id = names_[name.temporary].find(name.text);
  return id ? &values_[name.temporary][*id] : nullptr;
}

void NamedValueTable::assign(const ValueNameRef &name, NamedValue value) {
  bool inserted = false;
  uint32_t id = names_[name.temporary].intern(name.text, &inserted);
  std::vector<NamedValue> &values = values_[name.temporary];
  if (inserted)
    values.push_back(std::move(value));
  else
    values[id] = std::move(value);
}

} // namespace aoa
