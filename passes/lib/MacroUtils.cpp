//===- MacroUtils.cpp ------------------------------------------------------===//
#include "MacroUtils.h"

#include <algorithm>
#include <limits>

namespace aoa {

Statement deriveStatement(const Statement &parent, const char *pass) {
  return deriveStatement(parent, pass, SharedString(printStatement(parent)));
}

Statement deriveStatement(const Statement &parent, const char *pass,
                          const SharedString &printedParent) {
  Statement child;
  child.location = parent.location;
  child.arrowLocation = parent.arrowLocation;
  child.expansion.reserve(parent.expansion.size() + 1);
  child.expansion = parent.expansion;
  child.expansion.push_back(
      ExpansionStep{pass, printedParent, parent.location});
  return child;
}

Name makeName(std::string text, SourceLocation location, bool temporary) {
  Name name;
  name.text = std::move(text);
  name.location = location;
  name.temporary = temporary;
  return name;
}

Attribute makeIntegerAttribute(std::string key, int64_t value,
                               SourceLocation location) {
  Attribute attribute;
  attribute.key = std::move(key);
  attribute.value = value;
  attribute.location = attribute.valueLocation = location;
  return attribute;
}

Attribute makeStringAttribute(std::string key, std::string value,
                              SourceLocation location) {
  Attribute attribute;
  attribute.key = std::move(key);
  attribute.value = std::move(value);
  attribute.quote = '"';
  attribute.location = attribute.valueLocation = location;
  return attribute;
}

std::pair<std::vector<std::string_view>::const_iterator,
          std::vector<std::string_view>::const_iterator>
keysWithPrefix(const std::vector<std::string_view> &sortedKeys,
               std::string_view prefix) {
  auto begin = std::lower_bound(sortedKeys.begin(), sortedKeys.end(), prefix);
  auto end = begin;
  while (end != sortedKeys.end() && end->substr(0, prefix.size()) == prefix)
    ++end;
  return {begin, end};
}

bool isDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

int64_t digitsValue(std::string_view digits) {
  int64_t value = 0;
  for (char c : digits) {
    if (value > (std::numeric_limits<int64_t>::max() - 9) / 10)
      return std::numeric_limits<int64_t>::max();
    value = value * 10 + (c - '0');
  }
  return value;
}

} // namespace aoa
