//===- ShardSourceResolver.h - resolve-shard-sources' state -----*- C++ -*-===//
//
// The state of the resolve-shard-sources pass while it binds destination
// pieces to stored source shards. Its work is split by concern:
// ResolveShardSources.cpp walks the destination shards and holds the pass;
// ShardSourceChecks.cpp checks the stored layouts (files, overlaps, whole
// destination keys); ShardSourceBinding.cpp chooses replicas and adds the
// transfers.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_LIB_SHARDSOURCERESOLVER_H
#define AOA_PASSES_LIB_SHARDSOURCERESOLVER_H

#include "IndexedReplicaGroups.h"
#include "PieceAnswers.h"
#include "ShardSourceFinder.h"
#include "SourceReplicas.h"
#include "aoa/ir/FlatRange.h"
#include "aoa/ir/SharedString.h"
#include "aoa/passes/CompilationState.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aoa {

/// Binds every stored piece of every destination shard to stored source
/// shards, filling state.plan and state.transfers.
class ShardSourceResolver {
public:
  explicit ShardSourceResolver(CompilationState &state)
      : state_(state), finder_(state), budget_(state.diags) {
    finder_.setDetail(ShardSourceFinder::Detail::Facts);
  }

  void run();

private:
  /// What bindEntry binds: `wanted` of source key `tensor` fills `target`.
  struct Binding {
    std::string_view targetKey; ///< the destination key
    TensorRef tensor;
    const Box &wanted;
    const Box &target;
    uint32_t destinationTensor;
    uint32_t destinationRank;
    uint32_t transform;
    Permutation permutation; ///< target axis i shows source axis p[i]
  };

  // Walking the destination (ResolveShardSources.cpp).
  /// `key`: the tensor's key, interned once for all its shards; `answers`
  /// answers its pieces, or says to ask finder_.
  void resolveShard(TensorRef tensor, const SharedString &key, ShardRef shard,
                    PieceAnswers &answers);
  /// A metadata's files' ids in the plan, its strings as the plan's
  /// SharedStrings and its tensors' global shapes as SharedShapes (one per
  /// key, for all its shards), by the metadata's own ids, filled on first
  /// use: found by id, not by text.
  struct MetadataIds {
    const ShardMetadata *metadata = nullptr;
    std::vector<uint32_t> planFiles;
    std::vector<SharedString> strings;
    std::vector<SharedShape> shapes;
    void reset(const ShardMetadata &m);
  };
  static constexpr uint32_t kNoFile = UINT32_MAX;
  /// The plan's id of `shard`'s file, added to `files` when new.
  uint32_t planFile(std::vector<plan::File> &files, MetadataIds &ids,
                    ShardRef shard);
  /// String `stringId` of ids.metadata; one SharedString per distinct
  /// text of both sides (a key both store is shared). `otherIdAhead`: the
  /// text's id in the other side's strings if the caller found it already
  /// (nullopt inside: the other side has no such text).
  const SharedString &
  interned(MetadataIds &ids, uint32_t stringId,
           std::optional<std::optional<uint32_t>> otherIdAhead = {});
  /// The global shape of ids.metadata's `tensor`, one for all its shards.
  const SharedShape &sharedShape(MetadataIds &ids, TensorRef tensor);
  plan::StoredTensor storedTensor(MetadataIds &ids, TensorRef tensor,
                                  const SharedString &key,
                                  const SharedString &name, ShardRef shard,
                                  uint32_t file);
  uint32_t planSourceTensor(ShardId id);
  /// CompilationState::broadcastBytes: every source tensor a destination
  /// rank needs, whole, once per (rank, tensor) of broadcast_.
  void countBroadcastBytes();
  /// The transform of an entry of `targetKey`, parsed once per distinct
  /// postprocess list (a conversion has a handful) and source and target.
  std::optional<uint32_t> transformOf(const EntryFacts &facts,
                                      std::string_view targetKey,
                                      size_t sourceRank, DType sourceType);

  // Layout checks (ShardSourceChecks.cpp).
  /// Every file belongs to one rank, and names one tensor once.
  void checkFiles(const ShardMetadata &metadata, const char *side);
  /// The source key's shards grouped into replicas and checked (cached per
  /// key); keys whose shards overlap without being replicas are reported
  /// the first time, and are `overlapping`.
  const CheckedReplicaGroups &sourceReplicas(TensorRef tensor);
  /// Takes keys' groups worked out ahead (PieceAnswers::replicasAhead) into
  /// the cache, unreported; clears `prepared`.
  void adoptReplicas(
      std::vector<std::pair<TensorId, CheckedReplicaGroups>> &prepared);
  /// Reports the first overlap of the stored shards of `tensor`.
  void reportOverlap(TensorRef tensor, const CheckedReplicaGroups &checked,
                     const ShardMetadata &metadata, const char *side);
  /// A destination key must be stored whole: the union of its shards must
  /// cover every element, or converted data would be silently dropped.
  /// (Shards may overlap: each is filled from the source on its own, so the
  /// shared elements get the same data.)
  void checkDestinationLayout(TensorRef tensor);

  // Replicas and transfers (ShardSourceBinding.cpp).
  /// Binds an entry of an answer for destination key `targetKey`:
  /// `facts`, what binding reads of it (PieceAnswers.h); `sourceTensor`,
  /// the stored tensor of its source key.
  void bindEntry(const EntryFacts &facts, std::string_view targetKey,
                 TensorId sourceTensor, uint32_t destinationTensor,
                 uint32_t destinationRank);
  /// The elements two boxes of one rank share (intersect() without
  /// building the box: this runs for every group of every source region).
  static int64_t overlapVolume(const Box &a, const Box &b);
  /// The elements of `wanted` that `segment` holds.
  static int64_t storedVolume(const ReplicaGroup &group,
                              const ReplicaSegment &segment, const Box &wanted);
  /// The rank that reads `shard` for a destination on `destinationRank`:
  /// the shard's own, or with --shared-src (every rank sees every source
  /// file) the destination's, so no bytes travel between ranks.
  uint32_t readingRank(ShardRef shard, uint32_t destinationRank) const {
    return state_.sharedSource ? destinationRank : shard.rank();
  }
  /// Whether a rank that reads `segment` must keep reading it from one
  /// replica: one rank holds two of them, or (--shared-src) any rank may
  /// read any of them.
  bool readsOneReplicaPerRank(const ReplicaSegment &segment) const {
    return segment.rankHoldsTwo ||
           (state_.sharedSource && segment.replicas.size() > 1);
  }
  /// The replica to read: one on `destinationRank` if any (the least-read
  /// file there), else the one on the rank, then in the file, that has read
  /// the least so far (--shared-src: in the least-read file).
  ShardId chooseReplica(llvm::ArrayRef<ShardId> replicas,
                        uint32_t destinationRank);
  /// chooseReplica for a segment; where one rank may read two of its
  /// replicas (readsOneReplicaPerRank), that rank reads it from the one it
  /// chose first, so no rank reads one source element from two copies.
  ShardId chooseReplica(const ReplicaSegment &segment,
                        uint32_t destinationRank);
  /// chooseReplica(replicas) for a segment of many replicas (data
  /// parallelism gives a segment a replica per data-parallel group), in
  /// O(log replicas) per choice instead of a scan; the same answer.
  ShardId chooseManyReplicas(const ReplicaSegment &segment,
                             uint32_t destinationRank);
  /// Binds the part of `wanted` in `group`: a replica for every box of
  /// every segment (bytes counted as it is chosen, so boxes spread over
  /// replicas), and the boxes read from one replica one after the other
  /// joined into a run. A run inside one segment keeps its boxes; one across
  /// segments (a replica stored whole beside split ones) is cut afresh, so
  /// that a whole replica serves its whole part in one transfer.
  void bindRuns(const Binding &b, const ReplicaGroup &group);
  /// A reshape maps whole blocks of rows, so `wanted` must come whole from
  /// one replica: the segments that hold it must be of one group and have a
  /// replica in common. `groups`: those that overlap `wanted`, in order.
  void bindReshaped(const Binding &b,
                    llvm::ArrayRef<const ReplicaGroup *> groups);
  /// A transfer of `part` (of `wanted`) from `replica` into its place in
  /// `target`.
  void addTransfer(const Binding &b, const Box &part, ShardId replica);

  CompilationState &state_;
  ShardSourceFinder finder_;
  ErrorBudget budget_;
  /// Bytes read so far by each rank that reads; a map, as rank ids can be
  /// sparse (ranks 0 and 2^24-1 alone must not make a table of 2^24), open
  /// addressed: it is looked up for every candidate replica of every piece.
  llvm::DenseMap<uint32_t, int64_t> readBytes_;
  std::vector<int64_t> fileReadBytes_; ///< by source metadata file id
  std::unordered_map<TensorId, CheckedReplicaGroups> sourceReplicas_;
  /// (segment, rank) -> the replica that rank reads it from, for segments
  /// that readsOneReplicaPerRank.
  std::map<std::pair<const ReplicaSegment *, uint32_t>, ShardId> chosenOnRank_;
  /// By source shard: its plan source tensor, or kNoTensor (a table, not
  /// a map: most shards of a conversion are read).
  static constexpr uint32_t kNoTensor = UINT32_MAX;
  std::vector<uint32_t> sourceTensorIds_;

  MetadataIds sourceIds_, destinationIds_;
  /// (destination rank << 32 | source tensor) of every binding,
  /// deduplicated once at the end (countBroadcastBytes): a hash set of them
  /// cost more than the sort.
  std::vector<uint64_t> broadcast_;
  struct CachedTransform {
    /// The interned list it was found for (compared first, by address),
    /// and its text (the lists of the other finder).
    const std::vector<std::string> *list;
    std::vector<std::string> postprocess;
    size_t sourceRank;
    DType sourceType;
    DType targetType;
    bool state;
    uint32_t id;
  };
  std::vector<CachedTransform> transformCache_;
  /// Per segment of many replicas (chooseManyReplicas): its replicas by
  /// rank, and a min-heap of their loads. Loads only grow, so an entry's
  /// load is a lower bound of its replica's; the top is the least loaded
  /// once its load is current.
  struct ReplicaLoad {
    int64_t rankBytes, fileBytes;
    uint32_t position; ///< in segment.replicas: ties go to the first
    friend bool operator<(const ReplicaLoad &a, const ReplicaLoad &b) {
      return std::tie(a.rankBytes, a.fileBytes, a.position) <
             std::tie(b.rankBytes, b.fileBytes, b.position);
    }
  };
  struct ReplicaIndex {
    std::vector<std::pair<uint32_t, uint32_t>> byRank; ///< (rank, position)
    std::vector<ReplicaLoad> heap; ///< std::push_heap order, least on top
  };
  std::unordered_map<const ReplicaSegment *, ReplicaIndex> replicaIndex_;
};

} // namespace aoa

#endif // AOA_PASSES_LIB_SHARDSOURCERESOLVER_H
