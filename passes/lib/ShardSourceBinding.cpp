//===- ShardSourceBinding.cpp - Replicas and transfers for a region -------===//
//
// How resolve-shard-sources (ShardSourceResolver.h) binds one source region
// of a find_shard_sources entry: it checks the region is stored, chooses a
// replica per segment (local first, then the least-read rank and file),
// joins boxes read from one replica into runs, and adds the transfers. With
// --shared-src the destination's rank reads every piece it writes, from
// any replica (local first, then the least-read file).
//
//===----------------------------------------------------------------------===//
#include "ShardSourceResolver.h"

#include "aoa/ir/BoxOverlap.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>

namespace aoa {

void ShardSourceResolver::bindEntry(const EntryFacts &facts,
                                    std::string_view targetKey,
                                    TensorId sourceTensor,
                                    uint32_t destinationTensor,
                                    uint32_t destinationRank) {
  const ShardMetadata &source = *state_.source.metadata();
  TensorRef tensor = source.tensor(sourceTensor);
  std::optional<uint32_t> transform =
      transformOf(facts, targetKey, tensor.ndim(), tensor.dtype());
  if (!transform)
    return;
  const std::vector<plan::TransformStep> *steps =
      &state_.transforms.transforms[*transform];
  uint64_t pair = uint64_t(destinationRank) << 32 | tensor.id();
  if (broadcast_.empty() || broadcast_.back() != pair)
    broadcast_.push_back(pair);

  const Box &wanted = facts.wanted;
  const Box &target = facts.target;
  const CheckedReplicaGroups &checked = sourceReplicas(tensor);
  if (checked.overlapping)
    return; // reported
  const IndexedReplicaGroups &replicas = checked.indexed;
  // The groups `wanted` overlaps, in their order.
  llvm::SmallVector<const ReplicaGroup *, 8> holding;
  for (uint32_t g : replicas.candidates(wanted))
    if (overlapVolume(replicas.groups()[g].box, wanted) > 0)
      holding.push_back(&replicas.groups()[g]);
  int64_t found = 0;
  for (const ReplicaGroup *group : holding)
    for (const ReplicaSegment &segment : group->segmentsMeeting(wanted))
      found += storedVolume(*group, segment, wanted);
  if (found != wanted.volume()) {
    if (budget_.allow())
      state_.diags
          .error(SourceLocation{},
                 "'" + std::string(targetKey) + target.toString() +
                     "' needs " + std::string(tensor.key()) +
                     wanted.toString() + ", but " +
                     std::to_string(wanted.volume() - found) +
                     " of its elements are in no stored shard of the source")
          .hint("the source metadata's shards must cover every key whole");
    return;
  }
  Permutation p = plan::composedPermutation(*steps, wanted.rank());
  Binding binding{
      targetKey,       tensor,     wanted, target, destinationTensor,
      destinationRank, *transform, p};
  if (!plan::keepsBoxes(*steps)) {
    bindReshaped(binding, holding);
    return;
  }
  for (const ReplicaGroup *group : holding)
    bindRuns(binding, *group);
}

int64_t ShardSourceResolver::overlapVolume(const Box &a, const Box &b) {
  int64_t volume = 1;
  for (size_t i = 0; i < a.rank(); ++i)
    volume *=
        std::max<int64_t>(0, std::min(a.dim(i).end, b.dim(i).end) -
                                 std::max(a.dim(i).begin, b.dim(i).begin));
  return volume;
}

int64_t ShardSourceResolver::storedVolume(const ReplicaGroup &group,
                                          const ReplicaSegment &segment,
                                          const Box &wanted) {
  int64_t volume = 0;
  group.forEachPiece(segment, [&](const Box &box, int64_t) {
    volume += overlapVolume(box, wanted);
  });
  return volume;
}

ShardId ShardSourceResolver::chooseReplica(llvm::ArrayRef<ShardId> replicas,
                                           uint32_t destinationRank) {
  const ShardMetadata &source = *state_.source.metadata();
  auto load = [&](ShardId id) {
    ShardRef shard = source.shard(id);
    return std::make_tuple(shard.rank() != destinationRank,
                           readBytes_[readingRank(shard, destinationRank)],
                           fileReadBytes_[shard.fileId()]);
  };
  ShardId best = replicas[0];
  auto bestLoad = load(best);
  for (ShardId id : replicas.drop_front())
    if (auto l = load(id); l < bestLoad) {
      best = id;
      bestLoad = l;
    }
  return best;
}

ShardId ShardSourceResolver::chooseManyReplicas(const ReplicaSegment &segment,
                                                uint32_t destinationRank) {
  const ShardMetadata &source = *state_.source.metadata();
  llvm::ArrayRef<ShardId> replicas = segment.replicas;
  // With --shared-src the reading rank is the destination's whatever the
  // replica, so only the files' loads tell replicas apart (and the heap's
  // loads stay lower bounds whichever rank asks).
  auto loadOf = [&](uint32_t position) {
    ShardRef shard = source.shard(replicas[position]);
    return ReplicaLoad{state_.sharedSource ? 0 : readBytes_[shard.rank()],
                       fileReadBytes_[shard.fileId()], position};
  };
  auto [it, created] = replicaIndex_.try_emplace(&segment);
  ReplicaIndex &index = it->second;
  if (created) {
    for (uint32_t p = 0; p < replicas.size(); ++p) {
      index.byRank.push_back({source.shard(replicas[p]).rank(), p});
      index.heap.push_back(loadOf(p));
    }
    std::sort(index.byRank.begin(), index.byRank.end());
    std::make_heap(
        index.heap.begin(), index.heap.end(),
        [](const ReplicaLoad &a, const ReplicaLoad &b) { return b < a; });
  }
  // A replica on the destination's rank wins over any other: the least
  // loaded of those (their rank's bytes are the same, so by file, then
  // position).
  auto local = std::equal_range(
      index.byRank.begin(), index.byRank.end(),
      std::make_pair(destinationRank, uint32_t(0)),
      [](const auto &a, const auto &b) { return a.first < b.first; });
  if (local.first != local.second) {
    std::optional<ReplicaLoad> best;
    for (auto at = local.first; at != local.second; ++at)
      if (ReplicaLoad load = loadOf(at->second); !best || load < *best)
        best = load;
    return replicas[best->position];
  }
  auto greater = [](const ReplicaLoad &a, const ReplicaLoad &b) {
    return b < a;
  };
  for (;;) {
    ReplicaLoad current = loadOf(index.heap.front().position);
    if (!(index.heap.front() < current))
      return replicas[current.position];
    // Its load grew since it was pushed: put it back with the current one.
    std::pop_heap(index.heap.begin(), index.heap.end(), greater);
    index.heap.back() = current;
    std::push_heap(index.heap.begin(), index.heap.end(), greater);
  }
}

ShardId ShardSourceResolver::chooseReplica(const ReplicaSegment &segment,
                                           uint32_t destinationRank) {
  // A scan is faster for the few replicas most segments have.
  constexpr size_t kScannedReplicas = 16;
  ShardId best = segment.replicas.size() <= kScannedReplicas
                     ? chooseReplica(segment.replicas, destinationRank)
                     : chooseManyReplicas(segment, destinationRank);
  if (!readsOneReplicaPerRank(segment))
    return best;
  uint32_t rank =
      readingRank(state_.source.metadata()->shard(best), destinationRank);
  return chosenOnRank_.try_emplace(std::make_pair(&segment, rank), best)
      .first->second;
}

void ShardSourceResolver::bindRuns(const Binding &b,
                                   const ReplicaGroup &group) {
  const ShardMetadata &source = *state_.source.metadata();
  const int64_t elementSize = dtypeSize(b.tensor.dtype());
  struct Run {
    ShardId replica;
    const ReplicaSegment *segment; ///< the first; null: several
    int64_t begin, end;            ///< flat, in the group's box
    /// Of `wanted`, while in one segment (inline: a run per entry).
    llvm::SmallVector<Box, 2> parts;
  };
  std::optional<Run> run;
  auto flush = [&] {
    if (!run)
      return;
    if (run->segment) {
      for (const Box &part : run->parts)
        addTransfer(b, part, run->replica);
    } else {
      for (const FlatPiece &piece :
           flatRangeToBoxes(group.box, run->begin, run->end))
        if (std::optional<Box> part = intersect(piece.box, b.wanted))
          addTransfer(b, *part, run->replica);
    }
    run.reset();
  };
  // (Segments that hold none of `wanted` would add nothing to a run.)
  for (const ReplicaSegment &segment : group.segmentsMeeting(b.wanted))
    group.forEachPiece(segment, [&](const Box &box, int64_t begin) {
      std::optional<Box> part = intersect(box, b.wanted);
      if (!part)
        return;
      ShardId chosen = chooseReplica(segment, b.destinationRank);
      ShardRef shard = source.shard(chosen);
      int64_t bytes = part->volume() * elementSize;
      readBytes_[readingRank(shard, b.destinationRank)] += bytes;
      fileReadBytes_[shard.fileId()] += bytes;
      int64_t end = begin + box.volume();
      // A replica's range is contiguous, so it stores everything between
      // two boxes it serves; boxes between them hold nothing of `wanted`.
      if (run && run->replica == chosen) {
        run->end = end;
        if (run->segment != &segment)
          run->segment = nullptr;
        else
          run->parts.push_back(std::move(*part));
        return;
      }
      flush();
      run = Run{chosen, &segment, begin, end, {std::move(*part)}};
    });
  flush();
}

void ShardSourceResolver::bindReshaped(
    const Binding &b, llvm::ArrayRef<const ReplicaGroup *> groups) {
  std::vector<const ReplicaSegment *> segments;
  size_t holders = 0; // groups that store some of `wanted`
  for (const ReplicaGroup *group : groups) {
    size_t before = segments.size();
    for (const ReplicaSegment &segment : group->segmentsMeeting(b.wanted))
      if (storedVolume(*group, segment, b.wanted) > 0)
        segments.push_back(&segment);
    holders += segments.size() > before;
  }
  std::vector<ShardId> common;
  if (holders == 1) {
    common.assign(segments[0]->replicas.begin(), segments[0]->replicas.end());
    for (const ReplicaSegment *segment : segments) {
      std::vector<ShardId> both;
      std::set_intersection(common.begin(), common.end(),
                            segment->replicas.begin(), segment->replicas.end(),
                            std::back_inserter(both));
      common = std::move(both);
    }
  }
  if (common.empty()) {
    if (budget_.allow())
      state_.diags
          .error(SourceLocation{},
                 "'" + std::string(b.targetKey) + b.target.toString() +
                     "' comes from " + std::string(b.tensor.key()) +
                     b.wanted.toString() +
                     ", which several stored shards hold, through a "
                     "reshape; splitting a reshaped region is not supported")
          .hint("store the source so that one shard holds each reshaped "
                "block run, or reshape after the resharding");
    return;
  }
  // As chooseReplica(segment): a rank that holds two copies keeps reading
  // from the one it chose first.
  ShardId replica = chooseReplica(common, b.destinationRank);
  ShardRef shard = state_.source.metadata()->shard(replica);
  uint32_t reader = readingRank(shard, b.destinationRank);
  for (const ReplicaSegment *segment : segments) {
    auto chosen = chosenOnRank_.find(std::make_pair(segment, reader));
    if (chosen != chosenOnRank_.end() &&
        std::binary_search(common.begin(), common.end(), chosen->second)) {
      replica = chosen->second;
      shard = state_.source.metadata()->shard(replica);
      break;
    }
  }
  reader = readingRank(shard, b.destinationRank);
  for (const ReplicaSegment *segment : segments)
    if (readsOneReplicaPerRank(*segment))
      chosenOnRank_.try_emplace(std::make_pair(segment, reader), replica);
  int64_t bytes =
      b.wanted.volume() * static_cast<int64_t>(dtypeSize(b.tensor.dtype()));
  readBytes_[reader] += bytes;
  fileReadBytes_[shard.fileId()] += bytes;
  addTransfer(b, b.wanted, replica);
}

void ShardSourceResolver::addTransfer(const Binding &b, const Box &part,
                                      ShardId replica) {
  Box destinationRegion = b.target;
  if (part != b.wanted) {
    llvm::SmallVector<Interval, 4> dims;
    for (size_t i = 0; i < b.target.rank(); ++i) {
      const Interval &s = part.dim(b.permutation[i]);
      int64_t begin = b.target.dim(i).begin +
                      (s.begin - b.wanted.dim(b.permutation[i]).begin);
      dims.push_back({begin, begin + s.size()});
    }
    destinationRegion = Box(dims);
  }
  uint32_t sourceRank =
      readingRank(state_.source.metadata()->shard(replica), b.destinationRank);
  state_.transfers.push_back(
      Transfer{planSourceTensor(replica), b.destinationTensor, sourceRank,
               b.destinationRank, b.transform, part, destinationRegion});
}

} // namespace aoa
