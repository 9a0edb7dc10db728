//===- VarMappingChain.h - Name links between statements --------*- C++ -*-===//
//
// Fused macros need the shard count of names that are not keys (a temporary
// made by an earlier statement). The chain records, for every 1 -> n and
// n -> 1 statement, which names lead to which, so a name can be followed back
// to a source key or forward to a destination key (Paddle's
// get_var_mapping_chain_macro). Unlike Paddle, a name feeding several
// statements keeps all its links, and self links (`s -> s, dtype=...`) are
// not recorded.
//
// Each link also keeps what the statement does to the axes (`^T`, `permute`,
// `reshape`), so that the fused axis of a name can be mapped to the axes of
// the key the walk reaches (see AxisTrace.h).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_VARMAPPINGCHAIN_H
#define AOA_PASSES_VARMAPPINGCHAIN_H

#include "aoa/ir/SourceManager.h"

#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace aoa {

class KeySpace;

/// A name in the chain: a key or statement name, or a macro temporary (which
/// lives in a namespace of its own, like Name::temporary).
struct ChainName {
  std::string text;
  bool temporary = false;

  friend bool operator<(const ChainName &a, const ChainName &b) {
    return std::tie(a.temporary, a.text) < std::tie(b.temporary, b.text);
  }
  friend bool operator==(const ChainName &a, const ChainName &b) {
    return a.temporary == b.temporary && a.text == b.text;
  }
  /// As diagnostics print it: `%text` for a temporary.
  std::string spelling() const { return (temporary ? "%" : "") + text; }
};

/// One change of axes a statement makes, from its left side to its right.
struct AxisStep {
  enum class Kind { Permute, Reshape };
  Kind kind = Kind::Permute;
  /// Permute: the attribute's text; "[]" reverses all axes (also `X^T`).
  std::string permutation;
  /// Reshape: the canonical shape [c0, c1, r...].
  std::vector<int64_t> canonicalShape;
  /// The attribute (or `^T` name) that asks for it.
  SourceLocation location;
};

/// Where a walk ended and the axis changes between there and its start.
struct ChainWalk {
  ChainName reached;
  struct Step {
    AxisStep step;
    /// True when the reached name is on the step's right side, so going
    /// from the reached name towards the start undoes the step.
    bool undone = false;
  };
  /// In order from the reached name to the name the walk started at.
  std::vector<Step> steps;
};

class VarMappingChain {
public:
  /// Records the links of one statement. `steps[i]` are the axis changes
  /// from `lhs[i]` to every right name (a 1 -> 1 statement's permute and
  /// reshape, after the `^T` of its source).
  void addStatement(const std::vector<ChainName> &lhs,
                    const std::vector<std::vector<AxisStep>> &steps,
                    const std::vector<ChainName> &rhs);

  /// Records that `derived` is made from `from` alone through `steps`, for
  /// backward walks only (a macro temporary standing for `from^T`): `from`
  /// keeps its forward links.
  void addDerivedName(const ChainName &derived, const ChainName &from,
                      std::vector<AxisStep> steps, std::string spelling);

  /// How messages name `name`: as written (`X^T`) for a derived temporary.
  std::string spelling(const ChainName &name) const;

  /// Follows links from `name` until a name of `side` is reached. Walking
  /// backward follows producers, forward follows consumers. Returns the walk,
  /// or nullopt with `why` set when it is ambiguous (several links), loops,
  /// or passes a name that a statement changes in place.
  std::optional<ChainWalk> resolve(const ChainName &name, bool forward,
                                   const KeySpace &side,
                                   std::string &why) const;

  void print(std::ostream &os) const;

private:
  struct Link {
    ChainName to;
    std::vector<AxisStep> steps; // in statement order, left to right
  };
  using Links = std::map<ChainName, std::vector<Link>>;

  Links forward_;
  Links backward_;
  /// (producer, consumer) of every link recorded, to skip repeats.
  std::set<std::pair<ChainName, ChainName>> linked_;
  /// Names a statement permutes or reshapes in place (`s -> s, permute=...`):
  /// where their axes go depends on statement order, which the chain does
  /// not keep, so walks through them stop with an error.
  std::map<ChainName, SourceLocation> changedInPlace_;
  std::map<ChainName, std::string> derivedSpellings_;
};

} // namespace aoa

#endif // AOA_PASSES_VARMAPPINGCHAIN_H
