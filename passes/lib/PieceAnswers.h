//===- PieceAnswers.h - Destination pieces answered ahead -------*- C++ -*-===//
//
// resolve-shard-sources asks find_shard_sources about every stored piece of
// every destination shard, then binds each answer to source replicas. The
// binding is sequential (it balances reads over replicas as it goes); the
// answers are not. With threads, PieceAnswers answers the pieces of the next
// chunk of destination tensors on a second thread, with a silent finder of
// its own, while the pass binds the chunk before, and hands the answers out
// in the pass's own walk order. A piece whose answer would report anything is
// handed out as "ask": the pass's finder answers it again, so diagnostics are
// exactly those of one thread, in the same order. Beside the answers it
// groups the replicas of the source keys they read first
// (CheckedReplicaGroups), which the binding would otherwise do.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_LIB_PIECEANSWERS_H
#define AOA_PASSES_LIB_PIECEANSWERS_H

#include "EntryFacts.h"
#include "IndexedReplicaGroups.h"
#include "ShardSourceFinder.h"
#include "aoa/ir/FlatRange.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/WorkerThread.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <atomic>
#include <optional>
#include <vector>

namespace aoa {

/// What resolve-shard-sources does with a destination key.
enum class TargetUse {
  Skip,    ///< no binding, or a missing one (resolve-outputs reported it)
  Added,   ///< `_ -> key`: the plan lists it, no data moves
  Resolve, ///< its shards are filled from the source
};
/// What the pass does with a destination tensor of target `binding` (null:
/// none).
TargetUse targetUse(const TargetBinding *binding);

/// The boxes a stored shard holds whole: its box, or its flat range's
/// (inline for the one box of most shards: this runs per shard).
llvm::SmallVector<FlatPiece, 1> storedPieces(ShardRef shard);

/// The shards of `tensor` store disjoint boxes (replicas counted once) that
/// together hold every element: the common case of resolve-shard-sources'
/// destination layout check, which reports nothing (defined beside that
/// check, in ShardSourceChecks.cpp).
bool shardsTileKey(TensorRef tensor);

class PieceAnswers {
public:
  /// Answers the pieces of `tensors` (destination tensors, in the order the
  /// pass walks them) ahead on a second thread; with `ahead` false, every
  /// piece is handed out as Ask and nothing runs beside the pass.
  PieceAnswers(CompilationState &state, llvm::ArrayRef<TensorId> tensors,
               bool ahead);
  PieceAnswers(const PieceAnswers &) = delete;
  PieceAnswers &operator=(const PieceAnswers &) = delete;

  /// Moves the walk to tensor `index` of the tensors (each in turn) and
  /// says what the pass does with it (targetUse). The targets of the
  /// tensors the walk has left are erased from the dataflow (each tensor is
  /// walked once), so that their views are freed as the plan grows, on the
  /// second thread when there is one: a walk never goes back, and a finder
  /// holds the views it keeps (its piece indices).
  TargetUse beginTensor(size_t index);
  /// The tensor being walked was checked ahead and its shards tile its key
  /// (shardsTileKey); false when not checked ahead.
  bool tilesKey() const;
  /// The id of the walked tensor's key among the source metadata's strings
  /// (ShardMetadata::strings()), looked up ahead: nullopt when the source
  /// has no such string, or nothing when not looked up (not ahead, or the
  /// tensor is not resolved).
  std::optional<std::optional<uint32_t>> keyInSourceStrings() const;
  /// The target of the tensor being walked (null: none). The walk reads
  /// targets only through this: Dataflow::targets changes beside it. Ask
  /// answers with ShardSourceFinder::answer(query, binding()).
  const TargetBinding *binding() const;

  enum class Status {
    Answered,   ///< sources and facts hold the answer (valid until the
                ///< walk leaves the tensor)
    Unanswered, ///< the finder answers nothing and has nothing to report
    Ask,        ///< the caller's finder must answer it
  };
  /// The answer to the next piece of the current tensor: each piece of each
  /// of its shards in turn, if its use is Resolve. `sources`: the stored
  /// source tensor of each entry; `facts`: each entry's EntryFacts.
  Status next(llvm::ArrayRef<TensorId> &sources,
              llvm::ArrayRef<EntryFacts> &facts);

  /// The replica groups of source keys that answers of the current chunk
  /// read, worked out with them, each key once for the whole walk (empty
  /// when not ahead). The pass takes them: it clears the list.
  std::vector<std::pair<TensorId, CheckedReplicaGroups>> &replicasAhead() {
    return chunks_[current_].replicas;
  }

private:
  static constexpr uint32_t kNotLookedUp = UINT32_MAX;
  static constexpr uint32_t kNotInSource = UINT32_MAX - 1;
  /// A tensor's entry in Dataflow::targets; binding is null when it has
  /// none.
  struct Target {
    TensorId tensor = 0; ///< in the destination metadata
    const TargetBinding *binding = nullptr;
  };
  Target findTarget(TensorId tensor);
  /// Erases `targets` from the dataflow, and clears the list.
  void releaseTargets(std::vector<Target> &targets);

  struct PieceAnswer {
    Status status = Status::Ask;
    uint32_t firstEntry = 0;
    uint32_t entryCount = 0;
  };
  /// The uses of tensors [begin, end) and the answers to their pieces.
  struct Chunk {
    size_t begin = 0, end = 0;
    /// By tensor - begin: the tensor's target.
    std::vector<Target> targets;
    /// By tensor - begin: shardsTileKey, for the tensors resolved.
    std::vector<bool> tiles;
    /// By tensor - begin: keyInSourceStrings, for the tensors resolved
    /// (kNotLookedUp otherwise, kNotInSource for none).
    std::vector<uint32_t> keyInSource;
    std::vector<PieceAnswer> answers;
    std::vector<TensorId> sources; ///< of each entry
    std::vector<EntryFacts> facts; ///< of each entry
    /// Source keys first read by this chunk's answers, in order.
    std::vector<TensorId> newSources;
    /// The first of them, grouped (groupReplicas).
    std::vector<std::pair<TensorId, CheckedReplicaGroups>> replicas;
  };
  /// Answers `chunk`'s tensors (on the second thread).
  void answer(Chunk &chunk);
  /// Groups the replicas of chunk.newSources in order until the walk waits
  /// for the chunk (stopGrouping_): the binding groups the rest itself, so
  /// this fills the time the answering thread would otherwise wait.
  void groupReplicas(Chunk &chunk);
  /// The end of the chunk of tensors that starts at `begin`: at most
  /// kChunkTensors tensors, and no more once they have kChunkShards shards.
  size_t chunkEnd(size_t begin) const;
  /// Starts answering the tensors after `previous` into `chunk`.
  void startAfter(size_t previous, Chunk &chunk);

  CompilationState &state_;
  llvm::ArrayRef<TensorId> tensors_;
  bool ahead_;
  /// Silent, recording EntryFacts (whose postprocess lists it keeps); used
  /// by one chunk at a time.
  ShardSourceFinder finder_;
  /// By source tensor: its replicas were grouped by an earlier chunk
  /// (touched by one chunk's answering at a time, like finder_).
  std::vector<bool> groupedSources_;
  std::atomic<bool> stopGrouping_{false};
  std::array<Chunk, 2> chunks_;
  size_t current_ = 0;       ///< the chunk being handed out
  size_t nextAnswer_ = 0;    ///< in chunks_[current_].answers
  size_t currentTensor_ = 0; ///< the tensor being walked
  /// Not ahead: the target of the tensor being walked (at most one).
  std::vector<Target> walked_;
  /// Answers the other chunk (ahead only); destroyed first, so it waits
  /// for that chunk before anything it uses goes.
  std::optional<runtime::WorkerThread> answering_;
};

} // namespace aoa

#endif // AOA_PASSES_LIB_PIECEANSWERS_H
