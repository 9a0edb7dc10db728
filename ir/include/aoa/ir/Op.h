//===- Op.h - The operation IR of a conversion ------------------*- C++ -*-===//
//
// After the macro passes every statement is one primitive operation on named
// values: rename, concat, split, permute, cast, reshape, alias, remove, add.
// build-ops turns statements into Ops (in reverse mode: backwards, sides
// swapped, permutations inverted); propagate-shapes runs them over views and
// fills in each op's result types.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_OP_H
#define AOA_IR_OP_H

#include "aoa/ir/DType.h"
#include "aoa/ir/SourceManager.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace aoa {

/// The name of a value: a real key or intermediate written by the user, or a
/// temporary made by a macro. Temporaries have a namespace of their own, so
/// `%fused_ffn.1.GATE_0` never equals a key spelled the same way.
struct ValueName {
  std::string text;
  bool temporary = false;

  friend bool operator==(const ValueName &a, const ValueName &b) {
    return a.temporary == b.temporary && a.text == b.text;
  }
  friend bool operator!=(const ValueName &a, const ValueName &b) {
    return !(a == b);
  }
  friend bool operator<(const ValueName &a, const ValueName &b) {
    return a.temporary != b.temporary ? b.temporary : a.text < b.text;
  }
};

/// `%temp`, a plain key, or a `` `quoted key` `` when it would not lex as a
/// name.
std::string printValueName(const ValueName &name);

enum class OpKind {
  Rename,  ///< `A -> B`
  Alias,   ///< `A -> B, axis=k`: the same value under a second name
  Concat,  ///< `A1, …, An -> B, axis=k`
  Split,   ///< `A -> B1, …, Bn, axis=k`
  Permute, ///< `A -> B, permute="[…]"` (and lowered `X^T`)
  Cast,    ///< `A -> B, dtype=…` or `src_dtype=…, dst_dtype=…`
  Reshape, ///< `A -> B, reshape="[c0, c1, …]"`
  Remove,  ///< `A -> _`
  Add,     ///< `_ -> B`
};

const char *opKindName(OpKind kind);

/// A shape and dtype, known once shapes are propagated.
struct TensorType {
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
};

/// `float32[2, 4]`.
std::string printTensorType(const TensorType &type);

struct Op {
  OpKind kind = OpKind::Rename;
  std::vector<ValueName> operands;
  std::vector<ValueName> results;
  /// Where each operand and result is written (parallel to the lists).
  std::vector<SourceLocation> operandLocations;
  std::vector<SourceLocation> resultLocations;
  /// Concat, Split, Alias: the axis as written (may be negative).
  int64_t axis = 0;
  /// Permute: the permutation as written ("[]" = reverse all axes), and
  /// whether reverse mode asks for its inverse.
  std::string permutation;
  bool invertPermutation = false;
  /// Cast: the dtype the values become.
  DType castTo = DType::F32;
  /// Reshape: the canonical shape (c0, c1, r...).
  std::vector<int64_t> canonicalShape;
  /// The statement this op came from (index into Program::statements).
  size_t statement = 0;
  /// Where to point diagnostics: the statement and the attribute that gave
  /// the op its meaning (the statement itself when there is none).
  SourceLocation location;
  SourceLocation attributeLocation;
  /// Filled by propagate-shapes, one per result.
  std::vector<TensorType> resultTypes;
};

/// One line: `d0, d1 = split(d) {axis = 1} : float64[4, 1], float64[4, 1]`
/// (types only once known).
void printOp(const Op &op, std::ostream &os);

} // namespace aoa

#endif // AOA_IR_OP_H
