//===- ExpansionLimits.h - Bounds checked before a macro expands -*- C++ -*-===//
//
// `name[a:b]` and the QKV macros' head counts turn one written number into
// that many names, statements and ops. A hostile or mistyped number (x[0:1e9],
// num_heads=1e8) must be refused before those names exist: against the shape
// of the tensor involved when it is a key, and against a fixed ceiling
// otherwise (the shape of a name made by an earlier statement is not known
// until propagate-shapes, which runs after the expansion).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_LIB_EXPANSIONLIMITS_H
#define AOA_PASSES_LIB_EXPANSIONLIMITS_H

#include "aoa/ir/AST.h"
#include "aoa/ir/Op.h"
#include "aoa/passes/KeySpace.h"

#include <cstdint>
#include <optional>

namespace aoa {

/// The most names one range, or one fused macro's heads, may expand to
/// (2^20). A model has far fewer experts, layers or heads per tensor; each
/// expanded name costs every pass memory and time.
inline constexpr int64_t kMaxExpandedNames = int64_t(1) << 20;

/// The type of the stored tensor a plain name stands for in `keys` (its
/// axes reversed for `X^T`); nullopt when it is not a stored key.
std::optional<TensorType> storedKeyType(const KeySpace &keys, const Name &name);

/// `axis` normalised for `rank` axes; nullopt when out of range (the
/// passes that use it report that).
std::optional<size_t> normalizedAxis(int64_t axis, size_t rank);

} // namespace aoa

#endif
