//===- ResolveShardSources.cpp - Bind pieces to stored source shards -------===//
//
// For every stored piece of every destination shard (a whole box, or the at
// most 2*ndim-1 boxes of a flat range), asks find_shard_sources which source
// regions fill it, and binds each source region to the stored source shards
// that hold it (boxes, or the boxes of their flat ranges). Replicas (shards
// with one box) may be stored in different shapes, whole or split into
// different flat ranges (SourceReplicas.h), so a replica is chosen per
// segment of the box that the same replicas hold: one on the destination's
// own rank, otherwise the one whose rank has read the fewest bytes so far, so
// reads spread over ranks and files.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/ir/BoxOverlap.h"

#include "ShardSourceFinder.h"
#include "SourceReplicas.h"
#include "aoa/ir/FlatRange.h"
#include "aoa/ir/OptimizerState.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <ostream>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace aoa {

uint32_t TransformTable::intern(const std::vector<plan::TransformStep> &steps) {
  for (uint32_t i = 0; i < transforms.size(); ++i) {
    const std::vector<plan::TransformStep> &t = transforms[i];
    if (t.size() == steps.size() &&
        std::equal(t.begin(), t.end(), steps.begin(),
                   [](const plan::TransformStep &a,
                      const plan::TransformStep &b) {
                     return a.text() == b.text();
                   }))
      return i;
  }
  transforms.push_back(steps);
  return static_cast<uint32_t>(transforms.size() - 1);
}

namespace {

class Resolver {
public:
  explicit Resolver(CompilationState &state)
      : state_(state), finder_(state), budget_(state.diags) {}

  void run() {
    state_.transfers.clear();
    state_.transforms = TransformTable();
    state_.plan = plan::Plan();
    state_.broadcastBytes = 0;
    const ShardMetadata &destination = *state_.destination.metadata();
    uint32_t ranks = 0;
    for (uint32_t id = 0; id < destination.shardCount(); ++id)
      ranks = std::max(ranks, destination.shard(id).rank() + 1);
    const ShardMetadata &source = *state_.source.metadata();
    for (uint32_t id = 0; id < source.shardCount(); ++id)
      ranks = std::max(ranks, source.shard(id).rank() + 1);
    state_.plan.ranks = ranks;
    state_.plan.memoryBudget = state_.memoryBudget;
    checkFiles(source, "source");
    checkFiles(destination, "destination");
    // StoredTensor holds SmallVectors, whose moves are not noexcept: growing
    // the vectors would copy every element.
    state_.plan.destinationTensors.reserve(destination.shardCount());
    state_.plan.sourceTensors.reserve(source.shardCount());
    state_.transfers.reserve(2 * destination.shardCount());
    readBytes_.clear();
    fileReadBytes_.assign(source.files().size(), 0);

    for (TensorId id : destination.tensorIdsByKey()) {
      TensorRef tensor = destination.tensor(id);
      auto binding = state_.dataflow.targets.find(std::string(tensor.key()));
      if (binding == state_.dataflow.targets.end() ||
          binding->second.kind == TargetBinding::Kind::Missing)
        continue;
      if (binding->second.kind == TargetBinding::Kind::Added) {
        state_.plan.addedKeys.emplace_back(tensor.key());
        continue;
      }
      checkDestinationLayout(tensor);
      for (ShardRef shard : tensor.shards())
        resolveShard(tensor, shard);
    }
  }

private:
  uint32_t fileId(std::vector<plan::File> &files,
                  std::unordered_map<std::string_view, uint32_t> &ids,
                  std::string_view path, uint32_t rank) {
    auto [it, inserted] =
        ids.emplace(path, static_cast<uint32_t>(files.size()));
    if (inserted) // checkFiles made sure a file has one rank
      files.push_back(plan::File{std::string(path), rank});
    return it->second;
  }

  /// Every file belongs to one rank, and names one tensor once.
  void checkFiles(const ShardMetadata &metadata, const char *side) {
    std::unordered_map<uint32_t, uint32_t> rankOfFile;
    std::unordered_set<uint64_t> names;
    for (uint32_t id = 0; id < metadata.shardCount(); ++id) {
      ShardRef shard = metadata.shard(id);
      auto [it, inserted] = rankOfFile.emplace(shard.fileId(), shard.rank());
      if (!inserted && it->second != shard.rank() && budget_.allow()) {
        state_.diags
            .error(SourceLocation{},
                   std::string(side) + " file '" + std::string(shard.file()) +
                       "' belongs to rank " + std::to_string(it->second) +
                       " and to rank " + std::to_string(shard.rank()))
            .hint("every file is read or written by one rank; give the "
                  "shards of different ranks different files");
        it->second = shard.rank(); // report each change once
      }
      if (!names.insert(uint64_t(shard.fileId()) << 32 | shard.nameId())
               .second &&
          budget_.allow())
        state_.diags
            .error(SourceLocation{},
                   std::string(side) + " file '" + std::string(shard.file()) +
                       "' holds two tensors named '" +
                       std::string(shard.name()) + "' (one of them of key '" +
                       std::string(metadata.tensor(shard.tensorId()).key()) +
                       "')")
            .hint("give every shard stored in one file its own name");
    }
  }

  static plan::StoredTensor storedTensor(TensorRef tensor, ShardRef shard,
                                         uint32_t file) {
    plan::StoredTensor t;
    t.file = file;
    t.name = std::string(shard.name());
    t.key = std::string(tensor.key());
    t.dtype = tensor.dtype();
    t.globalShape.assign(tensor.globalShape().begin(),
                         tensor.globalShape().end());
    t.box = Box(shard.globalOffset(), shard.localShape());
    if (std::optional<FlatElementRange> flat = shard.flatRange())
      t.flat = *flat;
    return t;
  }

  /// The boxes a stored shard holds whole: its box, or its flat range's.
  static std::vector<FlatPiece> storedPieces(ShardRef shard) {
    Box box(shard.globalOffset(), shard.localShape());
    if (std::optional<FlatElementRange> flat = shard.flatRange())
      return flatRangeToBoxes(box, flat->begin, flat->end);
    return {FlatPiece{box, 0}};
  }

  /// The source key's shards grouped into replicas (cached per key); keys
  /// whose shards overlap without being replicas are reported once and
  /// remembered in overlapping_.
  const std::vector<ReplicaGroup> &sourceReplicas(TensorRef tensor) {
    auto [it, inserted] =
        sourceReplicas_.emplace(tensor.id(), std::vector<ReplicaGroup>());
    if (!inserted)
      return it->second;
    it->second = groupSourceReplicas(tensor);
    if (!checkDisjoint(tensor, it->second, *state_.source.metadata(),
                       "source"))
      overlapping_.insert(tensor.id());
    return it->second;
  }

  /// Groups (shards with different boxes) must not store a common element
  /// (a sort and sweep over the segments' boxes, BoxOverlap.h; the segments
  /// of one group are disjoint).
  bool checkDisjoint(TensorRef tensor, const std::vector<ReplicaGroup> &groups,
                     const ShardMetadata &metadata, const char *side) {
    std::vector<const Box *> boxes;
    std::vector<const ReplicaSegment *> owners;
    for (const ReplicaGroup &group : groups)
      for (const ReplicaSegment &segment : group.segments)
        group.forEachPiece(segment, [&](const Box &box, int64_t) {
          boxes.push_back(&box);
          owners.push_back(&segment);
        });
    std::optional<std::pair<size_t, size_t>> pair = findOverlappingPair(boxes);
    if (!pair)
      return true;
    if (budget_.allow()) {
      auto fileOf = [&](size_t box) {
        return std::string(metadata.shard(owners[box]->replicas[0]).file());
      };
      state_.diags
          .error(SourceLocation{},
                 std::string(side) + " key '" + std::string(tensor.key()) +
                     "': stored shards overlap in " +
                     intersect(*boxes[pair->first], *boxes[pair->second])
                         ->toString() +
                     " (in '" + fileOf(pair->first) + "' and '" +
                     fileOf(pair->second) + "') without being replicas")
          .hint("replicas have equal global_offset and local_shape; "
                "other shards of a key must not overlap");
    }
    return false;
  }

  /// A destination key must be stored whole: the union of its shards must
  /// cover every element, or converted data would be silently dropped.
  /// (Shards may overlap: each is filled from the source on its own, so the
  /// shared elements get the same data.)
  void checkDestinationLayout(TensorRef tensor) {
    // The distinct boxes the shards store whole (replicas counted once).
    std::vector<Box> pieces;
    for (ShardRef shard : tensor.shards())
      for (FlatPiece &piece : storedPieces(shard))
        pieces.push_back(std::move(piece.box));
    sortAndRemoveDuplicates(pieces);
    std::vector<const Box *> boxes;
    int64_t stored = 0;
    for (const Box &piece : pieces) {
      boxes.push_back(&piece);
      stored += piece.volume();
    }
    Box whole = Box::fromShape(tensor.globalShape());
    bool disjoint = !findOverlappingPair(boxes);
    if (disjoint && stored == whole.volume())
      return; // the common case, without building the complement
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
        .error(SourceLocation{},
               "destination key '" + std::string(tensor.key()) + "': " +
                   std::to_string(unstored) + " of its " +
                   std::to_string(whole.volume()) +
                   " elements are stored by no shard, e.g. " +
                   std::string(tensor.key()) + missing.front().toString())
        .hint("a destination layout stores every element of each key it "
              "lists; check the shards' global_offset, local_shape and "
              "flat_range");
  }

  /// The replica to read: one on `destinationRank` if any (the least-read
  /// file there), else the one on the rank, then in the file, that has read
  /// the least so far.
  ShardId chooseReplica(llvm::ArrayRef<ShardId> replicas,
                        uint32_t destinationRank) {
    const ShardMetadata &source = *state_.source.metadata();
    auto load = [&](ShardId id) {
      ShardRef shard = source.shard(id);
      return std::make_tuple(shard.rank() != destinationRank,
                             readBytes_[shard.rank()],
                             fileReadBytes_[shard.fileId()]);
    };
    ShardId best = replicas[0];
    for (ShardId id : replicas)
      if (load(id) < load(best))
        best = id;
    return best;
  }

  /// chooseReplica for a segment; where one rank holds two of its replicas,
  /// that rank reads it from the one it chose first, so no rank reads one
  /// source element from two copies.
  ShardId chooseReplica(const ReplicaSegment &segment,
                        uint32_t destinationRank) {
    ShardId best = chooseReplica(segment.replicas, destinationRank);
    if (!segment.rankHoldsTwo)
      return best;
    uint32_t rank = state_.source.metadata()->shard(best).rank();
    return chosenOnRank_.emplace(std::make_pair(&segment, rank), best)
        .first->second;
  }

  uint32_t planSourceTensor(ShardId id) {
    auto [it, inserted] = sourceTensorIds_.emplace(
        id, static_cast<uint32_t>(state_.plan.sourceTensors.size()));
    if (inserted) {
      const ShardMetadata &source = *state_.source.metadata();
      ShardRef shard = source.shard(id);
      uint32_t file = fileId(state_.plan.sourceFiles, sourceFileIds_,
                             shard.file(), shard.rank());
      state_.plan.sourceTensors.push_back(
          storedTensor(source.tensor(shard.tensorId()), shard, file));
    }
    return it->second;
  }

  void resolveShard(TensorRef tensor, ShardRef shard) {
    uint32_t file = fileId(state_.plan.destinationFiles, destinationFileIds_,
                           shard.file(), shard.rank());
    uint32_t destinationTensor =
        static_cast<uint32_t>(state_.plan.destinationTensors.size());
    state_.plan.destinationTensors.push_back(storedTensor(tensor, shard, file));
    TensorDesc query;
    for (const FlatPiece &piece : storedPieces(shard)) {
      query.assign(tensor.key(), piece.box, tensor.globalShape(),
                   tensor.dtype());
      if (!finder_.answer(query))
        continue;
      for (const MappingEntry &entry : finder_.entries())
        bindEntry(entry, destinationTensor, shard.rank());
    }
  }

  /// The transform of an entry, parsed once per distinct postprocess list
  /// (a conversion has a handful).
  std::optional<uint32_t> transformOf(const MappingEntry &entry,
                                      size_t sourceRank, DType sourceType) {
    bool state = !splitOptimizerSuffix(entry.target.key).second.empty();
    for (const CachedTransform &c : transformCache_)
      if (c.sourceRank == sourceRank && c.sourceType == sourceType &&
          c.targetType == entry.target.dtype && c.state == state &&
          c.postprocess == entry.postprocess)
        return c.id;
    std::string why;
    std::optional<std::vector<plan::TransformStep>> steps =
        plan::parseTransformSteps(entry.postprocess, sourceRank, why);
    if (!steps) {
      state_.diags.error(SourceLocation{}, "internal: transform of '" +
                                               entry.target.key + "': " + why);
      return std::nullopt;
    }
    // Optimizer states keep their own precision: a cast written for the
    // model weight does not apply to them (casting a moment to float16 and
    // back would round it); they are cast once, to their stored dtype.
    if (!splitOptimizerSuffix(entry.target.key).second.empty())
      steps->erase(std::remove_if(steps->begin(), steps->end(),
                                  [](const plan::TransformStep &step) {
                                    return step.kind ==
                                           plan::TransformStep::Kind::Cast;
                                  }),
                   steps->end());
    DType produced = plan::dtypeAfter(*steps, sourceType);
    if (produced != entry.target.dtype && isFloatingDType(produced) &&
        isFloatingDType(entry.target.dtype)) {
      plan::TransformStep cast;
      cast.kind = plan::TransformStep::Kind::Cast;
      cast.dtype = entry.target.dtype;
      steps->push_back(cast);
    }
    uint32_t id = state_.transforms.intern(*steps);
    transformCache_.push_back(CachedTransform{entry.postprocess, sourceRank,
                                              sourceType, entry.target.dtype,
                                              state, id});
    return id;
  }

  void bindEntry(const MappingEntry &entry, uint32_t destinationTensor,
                 uint32_t destinationRank) {
    const ShardMetadata &source = *state_.source.metadata();
    std::optional<TensorRef> tensor = source.find(entry.source.key);
    if (!tensor)
      return; // find_shard_sources reported it
    std::optional<uint32_t> transform =
        transformOf(entry, tensor->ndim(), tensor->dtype());
    if (!transform)
      return;
    const std::vector<plan::TransformStep> *steps =
        &state_.transforms.transforms[*transform];
    if (broadcast_.insert(uint64_t(destinationRank) << 32 | tensor->id()).second)
      state_.broadcastBytes +=
          Box::fromShape(tensor->globalShape()).volume() *
          static_cast<int64_t>(dtypeSize(tensor->dtype()));

    Box wanted = entry.source.box();
    Box target = entry.target.box();
    const std::vector<ReplicaGroup> &groups = sourceReplicas(*tensor);
    if (overlapping_.count(tensor->id()))
      return; // reported
    int64_t found = 0;
    for (const ReplicaGroup &group : groups)
      if (overlapVolume(group.box, wanted) > 0)
        for (const ReplicaSegment &segment : group.segments)
          found += storedVolume(group, segment, wanted);
    if (found != wanted.volume()) {
      if (budget_.allow())
        state_.diags
            .error(SourceLocation{},
                   "'" + entry.target.key + target.toString() + "' needs " +
                       entry.source.key + wanted.toString() + ", but " +
                       std::to_string(wanted.volume() - found) +
                       " of its elements are in no stored shard of the source")
            .hint("the source metadata's shards must cover every key whole");
      return;
    }
    Permutation p = plan::composedPermutation(*steps, wanted.rank());
    Binding binding{
        entry,           *tensor,    wanted, target, destinationTensor,
        destinationRank, *transform, p};
    if (!plan::keepsBoxes(*steps)) {
      bindReshaped(binding, groups);
      return;
    }
    for (const ReplicaGroup &group : groups)
      if (overlapVolume(group.box, wanted) > 0)
        bindRuns(binding, group);
  }

  /// What bindEntry binds: `wanted` of source key `tensor` fills `target`.
  struct Binding {
    const MappingEntry &entry;
    TensorRef tensor;
    const Box &wanted;
    const Box &target;
    uint32_t destinationTensor;
    uint32_t destinationRank;
    uint32_t transform;
    Permutation permutation; ///< target axis i shows source axis p[i]
  };

  /// The elements two boxes of one rank share (intersect() without
  /// building the box: this runs for every group of every source region).
  static int64_t overlapVolume(const Box &a, const Box &b) {
    int64_t volume = 1;
    for (size_t i = 0; i < a.rank(); ++i)
      volume *=
          std::max<int64_t>(0, std::min(a.dim(i).end, b.dim(i).end) -
                                   std::max(a.dim(i).begin, b.dim(i).begin));
    return volume;
  }

  /// The elements of `wanted` that `segment` holds.
  static int64_t storedVolume(const ReplicaGroup &group,
                              const ReplicaSegment &segment,
                              const Box &wanted) {
    int64_t volume = 0;
    group.forEachPiece(segment, [&](const Box &box, int64_t) {
      volume += overlapVolume(box, wanted);
    });
    return volume;
  }

  /// Binds the part of `wanted` in `group`: a replica for every box of
  /// every segment (bytes counted as it is chosen, so boxes spread over
  /// replicas), and the boxes read from one replica one after the other
  /// joined into a run. A run inside one segment keeps its boxes; one across
  /// segments (a replica stored whole beside split ones) is cut afresh, so
  /// that a whole replica serves its whole part in one transfer.
  void bindRuns(const Binding &b, const ReplicaGroup &group) {
    const ShardMetadata &source = *state_.source.metadata();
    const int64_t elementSize = dtypeSize(b.tensor.dtype());
    struct Run {
      ShardId replica;
      const ReplicaSegment *segment; ///< the first; null: several
      int64_t begin, end;            ///< flat, in the group's box
      std::vector<Box> parts;        ///< of `wanted`, while in one segment
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
    for (const ReplicaSegment &segment : group.segments)
      group.forEachPiece(segment, [&](const Box &box, int64_t begin) {
        std::optional<Box> part = intersect(box, b.wanted);
        if (!part)
          return;
        ShardId chosen = chooseReplica(segment, b.destinationRank);
        ShardRef shard = source.shard(chosen);
        int64_t bytes = part->volume() * elementSize;
        readBytes_[shard.rank()] += bytes;
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

  /// A reshape maps whole blocks of rows, so `wanted` must come whole from
  /// one replica: the segments that hold it must be of one group and have a
  /// replica in common.
  void bindReshaped(const Binding &b, const std::vector<ReplicaGroup> &groups) {
    std::vector<const ReplicaSegment *> segments;
    size_t holders = 0; // groups that store some of `wanted`
    for (const ReplicaGroup &group : groups) {
      if (overlapVolume(group.box, b.wanted) == 0)
        continue;
      size_t before = segments.size();
      for (const ReplicaSegment &segment : group.segments)
        if (storedVolume(group, segment, b.wanted) > 0)
          segments.push_back(&segment);
      holders += segments.size() > before;
    }
    std::vector<ShardId> common;
    if (holders == 1) {
      common.assign(segments[0]->replicas.begin(), segments[0]->replicas.end());
      for (const ReplicaSegment *segment : segments) {
        std::vector<ShardId> both;
        std::set_intersection(
            common.begin(), common.end(), segment->replicas.begin(),
            segment->replicas.end(), std::back_inserter(both));
        common = std::move(both);
      }
    }
    if (common.empty()) {
      if (budget_.allow())
        state_.diags
            .error(SourceLocation{},
                   "'" + b.entry.target.key + b.target.toString() +
                       "' comes from " + b.entry.source.key +
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
    for (const ReplicaSegment *segment : segments) {
      auto chosen = chosenOnRank_.find(std::make_pair(segment, shard.rank()));
      if (chosen != chosenOnRank_.end() &&
          std::binary_search(common.begin(), common.end(), chosen->second)) {
        replica = chosen->second;
        shard = state_.source.metadata()->shard(replica);
        break;
      }
    }
    for (const ReplicaSegment *segment : segments)
      if (segment->rankHoldsTwo)
        chosenOnRank_.emplace(std::make_pair(segment, shard.rank()), replica);
    int64_t bytes =
        b.wanted.volume() * static_cast<int64_t>(dtypeSize(b.tensor.dtype()));
    readBytes_[shard.rank()] += bytes;
    fileReadBytes_[shard.fileId()] += bytes;
    addTransfer(b, b.wanted, replica);
  }

  /// A transfer of `part` (of `wanted`) from `replica` into its place in
  /// `target`.
  void addTransfer(const Binding &b, const Box &part, ShardId replica) {
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
    uint32_t sourceRank = state_.source.metadata()->shard(replica).rank();
    state_.transfers.push_back(Transfer{
        planSourceTensor(replica), part, b.destinationTensor, destinationRegion,
        sourceRank, b.destinationRank, b.transform});
  }

  CompilationState &state_;
  ShardSourceFinder finder_;
  ErrorBudget budget_;
  /// Bytes read so far by each rank that reads; a map, as rank ids can be
  /// sparse (ranks 0 and 2^24-1 alone must not make a table of 2^24).
  std::unordered_map<uint32_t, int64_t> readBytes_;
  std::vector<int64_t> fileReadBytes_; ///< by source metadata file id
  std::unordered_map<TensorId, std::vector<ReplicaGroup>> sourceReplicas_;
  /// (segment, rank) -> the replica that rank reads it from, for segments
  /// with two replicas on one rank.
  std::map<std::pair<const ReplicaSegment *, uint32_t>, ShardId> chosenOnRank_;
  std::unordered_map<ShardId, uint32_t> sourceTensorIds_;
  /// Keyed by the metadata's interned file names.
  std::unordered_map<std::string_view, uint32_t> sourceFileIds_,
      destinationFileIds_;
  /// (destination rank, source tensor) pairs already counted.
  std::unordered_set<uint64_t> broadcast_;
  std::unordered_set<TensorId> overlapping_;
  struct CachedTransform {
    std::vector<std::string> postprocess;
    size_t sourceRank;
    DType sourceType;
    DType targetType;
    bool state;
    uint32_t id;
  };
  std::vector<CachedTransform> transformCache_;
};

class ResolveShardSourcesPass : public Pass {
public:
  const char *name() const override { return "resolve-shard-sources"; }
  const char *description() const override {
    return "bind every piece of every destination shard to a stored source "
           "shard (replicas balanced, local ones preferred)";
  }
  bool run(CompilationState &state) override {
    if (!state.destination.present())
      return false; // derive-destination failed and said why
    Resolver(state).run();
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    const plan::Plan &p = state.plan;
    for (const Transfer &t : state.transfers) {
      const plan::StoredTensor &src = p.sourceTensors[t.sourceTensor];
      const plan::StoredTensor &dst = p.destinationTensors[t.destinationTensor];
      os << dst.key << t.destinationRegion.toString() << " @" << t.destinationRank
         << " <- " << src.key << t.sourceRegion.toString() << " @"
         << t.sourceRank << " (" << p.sourceFiles[src.file].path << ")";
      for (const plan::TransformStep &step : state.transforms.transforms[t.transform])
        os << " " << step.text();
      os << "\n";
    }
  }
};

} // namespace

std::unique_ptr<Pass> createResolveShardSourcesPass() {
  return std::make_unique<ResolveShardSourcesPass>();
}

} // namespace aoa
