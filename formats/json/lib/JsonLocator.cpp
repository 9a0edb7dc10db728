//===- JsonLocator.cpp ----------------------------------------------------===//
#include "aoa/formats/json/JsonLocator.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace aoa {

size_t JsonLocator::skipSpace(size_t at) const {
  while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t' ||
                               text_[at] == '\n' || text_[at] == '\r'))
    ++at;
  return at;
}

size_t JsonLocator::skipString(size_t at) const {
  for (++at; at < text_.size(); ++at) {
    if (text_[at] == '\\')
      ++at;
    else if (text_[at] == '"')
      return at + 1;
  }
  return text_.size();
}

size_t JsonLocator::skipValue(size_t at) const {
  char c = charAt(at);
  if (c == '"')
    return skipString(at);
  if (c == '{' || c == '[') {
    // Brackets balance in valid JSON once strings are skipped.
    size_t depth = 0;
    while (at < text_.size()) {
      c = text_[at];
      if (c == '"') {
        at = skipString(at);
        continue;
      }
      if (c == '{' || c == '[')
        ++depth;
      else if ((c == '}' || c == ']') && --depth == 0)
        return at + 1;
      ++at;
    }
    return at;
  }
  while (at < text_.size() && text_[at] != ',' && text_[at] != '}' &&
         text_[at] != ']' && text_[at] != ' ' && text_[at] != '\t' &&
         text_[at] != '\n' && text_[at] != '\r')
    ++at;
  return at;
}

std::string JsonLocator::decodeString(size_t begin, size_t end) const {
  std::string_view token = text_.substr(begin, end - begin);
  if (token.size() >= 2 && token.find('\\') == std::string_view::npos)
    return std::string(token.substr(1, token.size() - 2));
  // Rare: let nlohmann undo the escapes (without exceptions).
  nlohmann::json value =
      nlohmann::json::parse(token.begin(), token.end(), nullptr, false);
  return value.is_string() ? value.get<std::string>() : std::string(token);
}

std::optional<size_t> JsonLocator::findElement(size_t at, size_t index) const {
  if (charAt(at) != '[')
    return std::nullopt;
  at = skipSpace(at + 1);
  if (charAt(at) == ']')
    return std::nullopt;
  for (size_t i = 0; i != index; ++i) {
    at = skipSpace(skipValue(at));
    if (charAt(at) != ',')
      return std::nullopt;
    at = skipSpace(at + 1);
  }
  return at;
}

std::optional<std::pair<size_t, size_t>>
JsonLocator::findMember(size_t at, std::string_view key) const {
  if (charAt(at) != '{')
    return std::nullopt;
  at = skipSpace(at + 1);
  while (charAt(at) == '"') {
    size_t keyAt = at;
    size_t keyEnd = skipString(at);
    at = skipSpace(keyEnd);
    if (charAt(at) != ':')
      return std::nullopt;
    at = skipSpace(at + 1);
    if (decodeString(keyAt, keyEnd) == key)
      return std::make_pair(keyAt, at);
    at = skipSpace(skipValue(at));
    if (charAt(at) != ',')
      return std::nullopt;
    at = skipSpace(at + 1);
  }
  return std::nullopt;
}

std::vector<size_t>
JsonLocator::elementOffsets(llvm::ArrayRef<JsonPathStep> path) const {
  std::vector<size_t> offsets;
  size_t at = valueOffset(path);
  if (charAt(at) != '[')
    return offsets;
  at = skipSpace(at + 1);
  if (charAt(at) == ']')
    return offsets;
  for (;;) {
    offsets.push_back(at);
    at = skipSpace(skipValue(at));
    if (charAt(at) != ',')
      return offsets;
    at = skipSpace(at + 1);
  }
}

std::pair<size_t, size_t>
JsonLocator::find(llvm::ArrayRef<JsonPathStep> path, size_t from) const {
  size_t value = from;
  size_t key = value;
  for (const JsonPathStep &step : path) {
    if (step.isIndex) {
      std::optional<size_t> element = findElement(value, step.index);
      if (!element)
        break;
      key = value = *element;
    } else {
      std::optional<std::pair<size_t, size_t>> member =
          findMember(value, step.key);
      if (!member)
        break;
      std::tie(key, value) = *member;
    }
  }
  return {key, value};
}

std::optional<JsonLocator::DuplicateKey>
JsonLocator::firstDuplicateKey() const {
  // A token-level walk: each open object remembers its keys; a string right
  // after '{' or ',' inside an object is a key.
  struct Container {
    bool isObject;
    std::unordered_map<std::string, size_t> keys;
  };
  std::vector<Container> open;
  bool expectKey = false;
  for (size_t at = skipSpace(0); at < text_.size(); at = skipSpace(at)) {
    char c = text_[at];
    if (c == '{' || c == '[') {
      open.push_back(Container{c == '{', {}});
      expectKey = c == '{';
      ++at;
    } else if (c == '}' || c == ']') {
      if (!open.empty())
        open.pop_back();
      expectKey = false;
      ++at;
    } else if (c == ',') {
      expectKey = !open.empty() && open.back().isObject;
      ++at;
    } else if (c == ':') {
      ++at;
    } else if (c == '"') {
      size_t end = skipString(at);
      if (expectKey) {
        std::string key = decodeString(at, end);
        auto [it, inserted] = open.back().keys.emplace(key, at);
        if (!inserted)
          return DuplicateKey{std::move(key), at, it->second};
        expectKey = false;
      }
      at = end;
    } else {
      // A number or literal; never stall on a stray byte.
      at = std::max(skipValue(at), at + 1);
    }
  }
  return std::nullopt;
}

} // namespace aoa
