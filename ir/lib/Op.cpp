//===- Op.cpp --------------------------------------------------------------===//
#include "aoa/ir/Op.h"

#include "aoa/ir/ShardMetadata.h"

#include <cctype>
#include <ostream>

namespace aoa {

namespace {

bool lexesAsName(const std::string &text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0])))
    return false;
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.')
      return false;
  return true;
}

template <typename T, typename F>
void printList(std::ostream &os, const std::vector<T> &items, F &&print) {
  for (size_t i = 0; i < items.size(); ++i)
    os << (i ? ", " : "") << print(items[i]);
}

} // namespace

std::string printValueName(const ValueName &name) {
  if (name.temporary)
    return "%" + name.text;
  return lexesAsName(name.text) ? name.text : "`" + name.text + "`";
}

const char *opKindName(OpKind kind) {
  switch (kind) {
  case OpKind::Rename:
    return "rename";
  case OpKind::Alias:
    return "alias";
  case OpKind::Concat:
    return "concat";
  case OpKind::Split:
    return "split";
  case OpKind::Permute:
    return "permute";
  case OpKind::Cast:
    return "cast";
  case OpKind::Reshape:
    return "reshape";
  case OpKind::Remove:
    return "remove";
  case OpKind::Add:
    return "add";
  }
  return "?";
}

std::string printTensorType(const TensorType &type) {
  return std::string(dtypeName(type.dtype)) + formatShape(type.shape);
}

void printOp(const Op &op, std::ostream &os) {
  if (!op.results.empty() && op.kind != OpKind::Add) {
    printList(os, op.results, printValueName);
    os << " = ";
  }
  os << opKindName(op.kind) << "(";
  printList(os, op.kind == OpKind::Add ? op.results : op.operands,
            printValueName);
  os << ")";
  switch (op.kind) {
  case OpKind::Concat:
  case OpKind::Split:
  case OpKind::Alias:
    os << " {axis = " << op.axis << "}";
    break;
  case OpKind::Permute:
    os << " {permutation = \"" << op.permutation << "\""
       << (op.invertPermutation ? ", inverted" : "") << "}";
    break;
  case OpKind::Cast:
    os << " {dtype = " << dtypeName(op.castTo) << "}";
    break;
  case OpKind::Reshape:
    os << " {canonical = " << formatShape(op.canonicalShape) << "}";
    break;
  default:
    break;
  }
  if (!op.resultTypes.empty()) {
    os << " : ";
    printList(os, op.resultTypes, printTensorType);
  }
}

} // namespace aoa
