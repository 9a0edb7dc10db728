//===- AST.cpp -------------------------------------------------------------===//
#include "aoa/ir/AST.h"

namespace aoa {

const char *macroTagSpelling(MacroTag tag) {
  switch (tag) {
  case MacroTag::FusedQkv:
    return "fused_qkv";
  case MacroTag::FusedQkvOld:
    return "fused_qkv_old";
  case MacroTag::FusedFfn:
    return "fused_ffn";
  }
  return "";
}

std::optional<MacroTag> macroTagFromSpelling(const std::string &word) {
  if (word == "fused_qkv")
    return MacroTag::FusedQkv;
  if (word == "fused_qkv_old")
    return MacroTag::FusedQkvOld;
  if (word == "fused_ffn")
    return MacroTag::FusedFfn;
  return std::nullopt;
}

const Attribute *Statement::findAttribute(const std::string &key) const {
  for (const Attribute &attribute : attributes)
    if (attribute.key == key)
      return &attribute;
  return nullptr;
}

bool Statement::hasTag(MacroTag tag) const {
  for (const TagUse &use : tags)
    if (use.tag == tag)
      return true;
  return false;
}

std::string printName(const Name &name) {
  std::string out = name.temporary ? "%" + name.text
                    : name.quoted   ? "`" + name.text + "`"
                                    : name.text;
  if (name.range)
    out += "[" + std::to_string(name.range->begin) + ":" +
           std::to_string(name.range->end) + "]";
  if (name.transposed)
    out += "^T";
  return out;
}

std::string printAttribute(const Attribute &attribute) {
  std::string out = attribute.key + "=";
  if (attribute.isInteger())
    return out + std::to_string(attribute.integer());
  char quote = attribute.quote ? attribute.quote : '\'';
  return out + quote + attribute.string() + quote;
}

namespace {
template <typename T, typename F>
std::string joinList(const std::vector<T> &items, F &&print) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ", ";
    out += print(items[i]);
  }
  return out + "]";
}
} // namespace

std::string printStatement(const Statement &statement) {
  std::string out = "Statement(";
  out += joinList(statement.lhs, printName);
  out += " -> ";
  out += joinList(statement.rhs, printName);
  if (!statement.tags.empty())
    out += ", tags=" + joinList(statement.tags, [](const TagUse &use) {
             return std::string(macroTagSpelling(use.tag));
           });
  if (!statement.attributes.empty())
    out += ", attrs=" + joinList(statement.attributes, printAttribute);
  return out + ")";
}

} // namespace aoa
