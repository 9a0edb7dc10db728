//===- FusedLayout.h - Shared machinery of the fused-weight macros -*- C++ -*-===//
#ifndef AOA_PASSES_LIB_FUSEDLAYOUT_H
#define AOA_PASSES_LIB_FUSEDLAYOUT_H

#include "aoa/passes/CompilationState.h"

#include <optional>
#include <string>

namespace aoa {

/// Builds the statements a fused macro expands into.
class FusedExpansion {
public:
  FusedExpansion(CompilationState &state, const Statement &statement,
                 const char *pass, size_t statementIndex);
  /// An expansion for another thread, which only reads the state: where
  /// leftShardCount or rightShardCount would report, they give up instead
  /// (nullopt), so that a reporting expansion of the statement on the main
  /// thread says why, in statement order.
  struct Silent {};
  FusedExpansion(CompilationState &state, const Statement &statement,
                 const char *pass, size_t statementIndex, Silent)
      : FusedExpansion(state, statement, pass, statementIndex) {
    silent_ = true;
  }

  /// The fused axis (the `axis` attribute, default 1), as written.
  int64_t axis() const { return axis_; }

  /// A temporary piece name, unique to this statement: `%<pass>.N.<label>`.
  Name piece(std::string_view label) const;
  /// piece(label + decimal index), built in one string: a large model's
  /// fused statements make hundreds of thousands of them.
  Name piece(std::string_view label, int64_t index) const;
  Name temporary(std::string_view label) const { return piece(label); }

  /// Emits `lhs -> rhs, axis=A`.
  void emit(std::vector<Name> lhs, std::vector<Name> rhs,
            std::vector<Statement> &out) const;

  /// How many shards the name left of the arrow has along the fused axis
  /// in the keys it is read from, following the chain back to a key.
  std::optional<int64_t> leftShardCount(const Name &name);
  /// The same for a name right of the arrow, following the chain forward;
  /// 1 when there is no destination layout.
  std::optional<int64_t> rightShardCount(const Name &name);

  /// Refuses head counts that cannot fit, before any piece is made: more
  /// than kMaxExpandedNames pieces (heads + 2 * groups), or more pieces than
  /// the fused key (or a q/k/v key) has elements along the fused axis.
  bool checkHeadBounds(int64_t heads, int64_t groups);

  /// Refuses to cut the fused axis into more than kMaxExpandedNames
  /// pieces (fused_ffn: a gate and an up piece per lcm(t_src, t_dst)),
  /// before any piece is made; `pieces` is 0 when counting them overflowed.
  /// The names and their shard counts are the message's.
  bool checkPieceCount(int64_t pieces, const Name &left, int64_t leftShards,
                       const Name &right, int64_t rightShards);

  /// Reports that `heads` cannot be split over `shards` shards.
  bool checkDivisible(int64_t heads, const char *what, int64_t shards,
                      const Name &name, const char *side);

  CompilationState &state() { return state_; }
  const Statement &statement() const { return statement_; }

private:
  std::optional<int64_t> shardCount(const Name &name, bool left);
  /// Counts the shards of the key `walk` reached along the key axes the
  /// fused axis of `name` comes from; reports when that is ambiguous.
  std::optional<int64_t> countAlongFusedAxis(const Name &name,
                                             const std::string &shown,
                                             const ChainWalk &walk,
                                             size_t keyRank,
                                             const KeySpace &keys);

  CompilationState &state_;
  const Statement &statement_;
  const char *pass_;
  size_t index_;
  int64_t axis_ = 1;
  SourceLocation tagLocation_;
  /// What every piece name starts with: `<pass>.N.` (piece()).
  std::string piecePrefix_;
  /// The statement as printed, once, for the expansion chain of every
  /// statement emit makes.
  mutable SharedString printedStatement_;
  bool silent_ = false;
};

} // namespace aoa

#endif
