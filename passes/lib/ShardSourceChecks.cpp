//===- ShardSourceChecks.cpp - Stored layouts resolve-shard-sources needs -===//
//
// What resolve-shard-sources checks of the stored layouts before binding
// (ShardSourceResolver.h): every file belongs to one rank and names a tensor
// once, source shards overlap only as replicas, and every destination key is
// stored whole.
//
//===----------------------------------------------------------------------===//
#include "PieceAnswers.h"
#include "ShardSourceResolver.h"

#include "aoa/ir/BoxOverlap.h"

#include "aoa/ir/FirstOccurrence.h"

#include "llvm/ADT/Hashing.h"

#include <string>
#include <vector>

namespace aoa {

void ShardSourceResolver::checkFiles(const ShardMetadata &metadata,
                                     const char *side) {
  // By the metadata's own ids, in flat tables: node-based hash containers
  // of a million shards' (file, name) pairs cost 0.1 s.
  constexpr uint32_t kNoRank = UINT32_MAX;
  std::vector<uint32_t> rankOfFile(metadata.files().size(), kNoRank);
  // (file << 32 | name), mixed whole: a hash of the low bits alone (the
  // name) probed every file that holds a name (27 s at 16,384 ranks).
  auto fileAndName = [&](size_t id) {
    ShardRef shard = metadata.shard(uint32_t(id));
    return uint64_t(shard.fileId()) << 32 | shard.nameId();
  };
  std::vector<uint32_t> firstOfName = firstOccurrences(
      metadata.shardCount(),
      [&](size_t id) { return uint64_t(llvm::hash_value(fileAndName(id))); },
      [&](size_t a, size_t b) { return fileAndName(a) == fileAndName(b); });
  for (uint32_t id = 0; id < metadata.shardCount(); ++id) {
    ShardRef shard = metadata.shard(id);
    uint32_t &rank = rankOfFile[shard.fileId()];
    if (rank == kNoRank)
      rank = shard.rank();
    if (rank != shard.rank() && budget_.allow()) {
      state_.diags
          .error(SourceLocation{},
                 std::string(side) + " file '" + std::string(shard.file()) +
                     "' belongs to rank " + std::to_string(rank) +
                     " and to rank " + std::to_string(shard.rank()))
          .hint("every file is read or written by one rank; give the "
                "shards of different ranks different files");
      rank = shard.rank(); // report each change once
    }
    if (firstOfName[id] != id && budget_.allow())
      state_.diags
          .error(SourceLocation{},
                 std::string(side) + " file '" + std::string(shard.file()) +
                     "' holds two tensors named '" + std::string(shard.name()) +
                     "' (one of them of key '" +
                     std::string(metadata.tensor(shard.tensorId()).key()) +
                     "')")
          .hint("give every shard stored in one file its own name");
  }
}

void ShardSourceResolver::adoptReplicas(
    std::vector<std::pair<TensorId, CheckedReplicaGroups>> &prepared) {
  for (auto &[id, checked] : prepared)
    sourceReplicas_.try_emplace(id, std::move(checked));
  prepared.clear();
}

const CheckedReplicaGroups &
ShardSourceResolver::sourceReplicas(TensorRef tensor) {
  auto [it, inserted] =
      sourceReplicas_.try_emplace(tensor.id()); // (no node made if found)
  CheckedReplicaGroups &checked = it->second;
  if (inserted)
    checked = CheckedReplicaGroups::of(tensor);
  // Reported when the binding first reads the key, whoever grouped it, so
  // that diagnostics come in the same order with threads or without.
  if (checked.overlapping && !checked.reported) {
    checked.reported = true;
    reportOverlap(tensor, checked, *state_.source.metadata(), "source");
  }
  return checked;
}

void ShardSourceResolver::reportOverlap(TensorRef tensor,
                                        const CheckedReplicaGroups &checked,
                                        const ShardMetadata &metadata,
                                        const char *side) {
  if (!budget_.allow())
    return;
  std::vector<const Box *> boxes;
  std::vector<const ReplicaSegment *> owners;
  storedBoxes(checked.indexed.groups(), boxes, owners);
  auto [first, second] = *findOverlappingPair(boxes);
  auto fileOf = [&](size_t box) {
    return std::string(metadata.shard(owners[box]->replicas[0]).file());
  };
  state_.diags
      .error(SourceLocation{},
             std::string(side) + " key '" + std::string(tensor.key()) +
                 "': stored shards overlap in " +
                 intersect(*boxes[first], *boxes[second])->toString() +
                 " (in '" + fileOf(first) + "' and '" + fileOf(second) +
                 "') without being replicas")
      .hint("replicas have equal global_offset and local_shape; "
            "other shards of a key must not overlap");
}

namespace {

/// The distinct boxes a key's shards store whole (replicas counted once),
/// sorted.
std::vector<Box> distinctStoredBoxes(TensorRef tensor) {
  std::vector<Box> pieces;
  for (ShardRef shard : tensor.shards())
    for (FlatPiece &piece : storedPieces(shard))
      pieces.push_back(std::move(piece.box));
  sortAndRemoveDuplicates(pieces);
  return pieces;
}

/// `pieces` (distinctStoredBoxes) are disjoint and hold `tensor` whole.
bool tile(const std::vector<Box> &pieces, TensorRef tensor) {
  std::vector<const Box *> boxes;
  int64_t stored = 0;
  for (const Box &piece : pieces) {
    boxes.push_back(&piece);
    stored += piece.volume();
  }
  return stored == Box::fromShape(tensor.globalShape()).volume() &&
         !findOverlappingPair(boxes);
}

} // namespace

bool shardsTileKey(TensorRef tensor) {
  return tile(distinctStoredBoxes(tensor), tensor);
}

void ShardSourceResolver::checkDestinationLayout(TensorRef tensor) {
  std::vector<Box> pieces = distinctStoredBoxes(tensor);
  if (tile(pieces, tensor))
    return; // the common case, without building the complement
  Box whole = Box::fromShape(tensor.globalShape());
  // The key minus every stored piece.
  std::vector<Box> missing{whole};
  for (const Box &piece : pieces) {
    std::vector<Box> rest;
    for (const Box &box : missing)
      for (Box &part : subtract(box, piece))
        rest.push_back(std::move(part));
    missing = std::move(rest);
  }
  int64_t unstored = 0;
  for (const Box &box : missing)
    unstored += box.volume();
  if (unstored == 0 || !budget_.allow())
    return;
  state_.diags
      .error(SourceLocation{}, "destination key '" + std::string(tensor.key()) +
                                   "': " + std::to_string(unstored) +
                                   " of its " + std::to_string(whole.volume()) +
                                   " elements are stored by no shard, e.g. " +
                                   std::string(tensor.key()) +
                                   missing.front().toString())
      .hint("a destination layout stores every element of each key it "
            "lists; check the shards' global_offset, local_shape and "
            "flat_range");
}

} // namespace aoa
