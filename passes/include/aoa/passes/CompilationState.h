//===- CompilationState.h - What the passes share ---------------*- C++ -*-===//
#ifndef AOA_PASSES_COMPILATIONSTATE_H
#define AOA_PASSES_COMPILATIONSTATE_H

#include "aoa/ir/AST.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/Mapping.h"
#include "aoa/ir/Op.h"
#include "aoa/passes/Dataflow.h"
#include "aoa/passes/KeySpace.h"
#include "aoa/passes/Transfer.h"
#include "aoa/passes/VarMappingChain.h"

#include <functional>
#include <memory>

namespace aoa {

/// The one file a derived destination layout (a plan without --dst)
/// stores every tensor in, as aoa-layout names rank 0's file by default.
inline constexpr const char *kDerivedDestinationFile = "rank00000.safetensors";

struct CompilationState {
  CompilationState(const SourceManager &sources, DiagnosticEngine &diags)
      : sources(sources), diags(diags) {}

  const SourceManager &sources;
  DiagnosticEngine &diags;

  /// The statements; macro passes rewrite them in place.
  Program program;
  /// After releaseStatements: each statement's expansion chain, by index
  /// (Op::statement), which diagnostics at an op still show.
  std::vector<std::vector<ExpansionStep>> releasedExpansions;
  /// Keys of the source checkpoint (`--src`).
  KeySpace source;
  /// Keys of the destination layout (`--dst`); absent without it until
  /// derive-destination (plans only) derives one into derivedDestination.
  KeySpace destination;
  std::unique_ptr<ShardMetadata> derivedDestination;
  /// Without --dst: lays out the derived targets, given as a layout that
  /// stores each whole on rank 0 (a Hugging Face packing, a pattern layout
  /// spec); returns null after reporting why not. Unset: that layout is
  /// the destination. Set by the driver.
  std::function<std::unique_ptr<ShardMetadata>(const ShardMetadata &whole)>
      layoutDerivedDestination;
  /// Name links recorded before the fused macros, to find shard counts.
  VarMappingChain chain;
  /// The statements as primitive ops, in execution order (build-ops).
  std::vector<Op> ops;
  /// Inputs, values and outputs (propagate-shapes).
  Dataflow dataflow;
  /// Targets to answer (`--queries`); empty means every destination shard.
  std::vector<TensorDesc> queries;
  bool hasQueryFile = false;
  /// Where query i of the file is written; found only when a diagnostic
  /// needs it. Set by the driver with the queries.
  std::function<SourceLocation(size_t index)> locateQuery;
  /// Receives every answer of find-shard-sources in order (--emit=mappings
  /// streams them to the output); answers are not kept, so memory does not
  /// grow with the number of destination shards.
  std::function<void(const TensorDesc &query,
                     llvm::ArrayRef<MappingEntry> entries)>
      mappingSink;
  /// Where a key is declared in the destination (or source) metadata file,
  /// for diagnostics about keys no statement mentions; set by the driver,
  /// which can read the file again when an error needs it.
  std::function<SourceLocation(bool destination, const std::string &key)>
      locateMetadataKey;

  /// What find-shard-sources answered: queries and entries.
  size_t answeredQueries = 0;
  size_t answeredEntries = 0;

  /// Buffer memory each rank may use in one round (--memory-budget).
  int64_t memoryBudget = int64_t(1) << 30;
  /// --shared-src: every rank sees every source file, so
  /// resolve-shard-sources makes the rank that writes a piece read it
  /// (no bytes travel between ranks); the plan records
  /// plan::SourceAccess::Shared.
  bool sharedSource = false;
  /// Threads a pass may use for work that does not depend on order (at
  /// least 1); the results do not depend on it.
  unsigned threads = 1;
  /// resolve-shard-sources: every piece of every destination shard bound
  /// to a stored source shard; the plan's files and tensors. schedule
  /// consumes the transfers (they are empty after it).
  std::vector<Transfer> transfers;
  TransformTable transforms;
  /// Bytes a broadcast-everything conversion would move: every destination
  /// rank receiving every source tensor it needs, whole.
  int64_t broadcastBytes = 0;
  /// schedule: the transfer program.
  plan::Plan plan;

  /// Statements are written in the load direction (checkpoint -> model). In
  /// reverse mode `--src` describes the model, so the names left of `->`
  /// live in the destination and those right of it in the source.
  const KeySpace &keysOfLeftNames() const {
    return program.reverse ? destination : source;
  }
  const KeySpace &keysOfRightNames() const {
    return program.reverse ? source : destination;
  }
};

/// Reports a diagnostic at a statement, with notes for the chain of macro
/// expansions that produced it (Paddle's "AOA traceback").
InFlightDiagnostic reportAt(CompilationState &state, const Statement &statement,
                            SourceLocation location, std::string message);
/// The same for a statement given by its expansion chain.
InFlightDiagnostic reportAt(CompilationState &state,
                            llvm::ArrayRef<ExpansionStep> expansion,
                            SourceLocation location, std::string message);

/// Reports a diagnostic at op `op`'s statement (its expansion chain as
/// notes), pointing at the result named `name` when there is one; an op of
/// kNoOp (an identity load) reports at `name` in the destination metadata.
InFlightDiagnostic reportAtOp(CompilationState &state, size_t op,
                              const std::string &name, std::string message);

/// Frees the statements and the name links once the ops stand for them (a
/// plan compile, before resolve-shard-sources: on the DeepSeek-V3 bench they
/// are about 90 MB of its peak). Keeps what reportAtOp shows: the statements'
/// expansion chains (releasedExpansions) and the program's flags.
void releaseStatements(CompilationState &state);

/// The attributes that cast a value of dtype `from` to `to`, as a statement
/// in the current direction would write them: `dtype='to'`, or under
/// --reverse `src_dtype='to', dst_dtype='from'`.
std::string spellCast(const CompilationState &state, DType to, DType from);

/// Prints the statements one per line with their locations (--emit=expanded
/// and --print-after of the macro passes).
void printStatements(const CompilationState &state, std::ostream &os);

/// Prints the ops one per line, each after its statement's location
/// (--emit=ir and --print-after of the op passes).
void printOps(const CompilationState &state, std::ostream &os);

} // namespace aoa

#endif // AOA_PASSES_COMPILATIONSTATE_H
