//===- ResolveShardSources.cpp - Bind pieces to stored source shards ------===//
//
// For every stored piece of every destination shard (a whole box, or the at
// most 2*ndim-1 boxes of a flat range), asks find_shard_sources which source
// regions fill it, and binds each source region to the stored source shards
// that hold it (boxes, or the boxes of their flat ranges). Replicas (shards
// with one box) may be stored in different shapes, whole or split into
// different flat ranges (SourceReplicas.h), so a replica is chosen per
// segment of the box that the same replicas hold: one on the destination's
// own rank, otherwise the one whose rank has read the fewest bytes so far, so
// reads spread over ranks and files. With --shared-src every rank sees every
// source file, so the destination's rank reads every piece it writes itself
// (a replica on its own rank if any, else the least-read file's).
//
// This file walks the destination shards and holds the pass; the work is
// split by concern as ShardSourceResolver.h says.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "PieceAnswers.h"
#include "ShardSourceResolver.h"
#include "aoa/ir/OptimizerState.h"

#include <algorithm>
#include <ostream>
#include <string>

namespace aoa {

void ShardSourceResolver::run() {
  state_.transfers.clear();
  state_.transforms = TransformTable();
  state_.plan = plan::Plan();
  state_.broadcastBytes = 0;
  const ShardMetadata &destination = *state_.destination.metadata();
  // With threads, the pieces are answered ahead on a second thread (the
  // first chunk of them beside the checks of the layouts below).
  llvm::ArrayRef<TensorId> order = destination.tensorIdsByKey();
  PieceAnswers answers(state_, order, state_.threads > 1);
  uint32_t ranks = 0;
  for (uint32_t id = 0; id < destination.shardCount(); ++id)
    ranks = std::max(ranks, destination.shard(id).rank() + 1);
  const ShardMetadata &source = *state_.source.metadata();
  for (uint32_t id = 0; id < source.shardCount(); ++id)
    ranks = std::max(ranks, source.shard(id).rank() + 1);
  state_.plan.ranks = ranks;
  state_.plan.memoryBudget = state_.memoryBudget;
  state_.plan.sourceAccess = state_.sharedSource ? plan::SourceAccess::Shared
                                                 : plan::SourceAccess::Owner;
  checkFiles(source, "source");
  checkFiles(destination, "destination");
  // At most one stored tensor per shard; transfers are two to three per
  // destination shard (a reserve costs address space only until used; the
  // vector moves its elements if it grows: Box's moves are noexcept).
  state_.plan.destinationTensors.reserve(destination.shardCount());
  state_.plan.sourceTensors.reserve(source.shardCount());
  state_.transfers.reserve(3 * destination.shardCount());
  readBytes_.clear();
  sourceTensorIds_.assign(source.shardCount(), kNoTensor);
  sourceIds_.reset(source);
  destinationIds_.reset(destination);
  fileReadBytes_.assign(source.files().size(), 0);

  for (size_t i = 0; i < order.size(); ++i) {
    TensorRef tensor = destination.tensor(order[i]);
    TargetUse use = answers.beginTensor(i);
    adoptReplicas(answers.replicasAhead());
    if (use == TargetUse::Skip)
      continue;
    if (use == TargetUse::Added) {
      state_.plan.addedKeys.emplace_back(tensor.key());
      continue;
    }
    if (!answers.tilesKey()) // else checked ahead, with nothing to report
      checkDestinationLayout(tensor);
    SharedString key =
        interned(destinationIds_, tensor.keyId(), answers.keyInSourceStrings());
    for (ShardRef shard : tensor.shards())
      resolveShard(tensor, key, shard, answers);
  }
  countBroadcastBytes();
}

void ShardSourceResolver::countBroadcastBytes() {
  std::sort(broadcast_.begin(), broadcast_.end());
  broadcast_.erase(std::unique(broadcast_.begin(), broadcast_.end()),
                   broadcast_.end());
  const ShardMetadata &source = *state_.source.metadata();
  for (uint64_t pair : broadcast_) {
    TensorRef tensor = source.tensor(TensorId(pair & 0xFFFFFFFFu));
    state_.broadcastBytes += Box::fromShape(tensor.globalShape()).volume() *
                             static_cast<int64_t>(dtypeSize(tensor.dtype()));
  }
  broadcast_ = std::vector<uint64_t>();
}

void ShardSourceResolver::resolveShard(TensorRef tensor,
                                       const SharedString &key, ShardRef shard,
                                       PieceAnswers &answers) {
  uint32_t file = planFile(state_.plan.destinationFiles, destinationIds_, shard);
  uint32_t destinationTensor =
      static_cast<uint32_t>(state_.plan.destinationTensors.size());
  state_.plan.destinationTensors.push_back(storedTensor(
      destinationIds_, tensor, key, interned(destinationIds_, shard.nameId()), shard, file));
  TensorDesc query;
  for (const FlatPiece &piece : storedPieces(shard)) {
    llvm::ArrayRef<TensorId> sources;
    llvm::ArrayRef<EntryFacts> facts;
    switch (answers.next(sources, facts)) {
    case PieceAnswers::Status::Unanswered:
      continue;
    case PieceAnswers::Status::Answered:
      break;
    case PieceAnswers::Status::Ask:
      query.assign(tensor.key(), piece.box, tensor.globalShape(),
                   tensor.dtype());
      if (!finder_.answer(query, answers.binding()))
        continue;
      sources = finder_.entrySources();
      facts = finder_.facts();
      break;
    }
    for (size_t e = 0; e < facts.size(); ++e)
      bindEntry(facts[e], tensor.key(), sources[e], destinationTensor,
                shard.rank());
  }
}

void ShardSourceResolver::MetadataIds::reset(const ShardMetadata &m) {
  metadata = &m;
  planFiles.assign(m.files().size(), kNoFile);
  strings.assign(m.strings().size(), SharedString());
  shapes.assign(m.tensorCount(), SharedShape());
}

uint32_t ShardSourceResolver::planFile(std::vector<plan::File> &files,
                                       MetadataIds &ids, ShardRef shard) {
  uint32_t &id = ids.planFiles[shard.fileId()];
  if (id == kNoFile) { // checkFiles made sure a file has one rank
    id = static_cast<uint32_t>(files.size());
    files.push_back(
        plan::File{std::string(shard.file()), shard.rank(), std::nullopt});
  }
  return id;
}

const SharedString &ShardSourceResolver::interned(
    MetadataIds &ids, uint32_t stringId,
    std::optional<std::optional<uint32_t>> otherIdAhead) {
  SharedString &string = ids.strings[stringId];
  if (!string.empty()) // (empty strings are made again: harmless)
    return string;
  // A text the other side stores too (a key the conversion keeps) gets one
  // string for both: found in the other metadata's own string table (or
  // ahead, by the caller), and kept in both caches. No map of our own: a
  // pool of every key cost 0.2 s.
  std::string_view text = ids.metadata->strings().get(stringId);
  MetadataIds &other = &ids == &sourceIds_ ? destinationIds_ : sourceIds_;
  if (other.metadata)
    if (std::optional<uint32_t> otherId =
            otherIdAhead ? *otherIdAhead
                         : other.metadata->strings().find(text)) {
      SharedString &shared = other.strings[*otherId];
      if (shared.empty())
        shared = SharedString(text);
      string = shared;
      return string;
    }
  string = SharedString(text);
  return string;
}

const SharedShape &ShardSourceResolver::sharedShape(MetadataIds &ids,
                                                    TensorRef tensor) {
  SharedShape &shape = ids.shapes[tensor.id()];
  if (shape.empty()) // (rank-0 shapes are made again: they are null)
    shape = SharedShape(tensor.globalShape());
  return shape;
}

plan::StoredTensor ShardSourceResolver::storedTensor(
    MetadataIds &ids, TensorRef tensor, const SharedString &key,
    const SharedString &name, ShardRef shard, uint32_t file) {
  plan::StoredTensor t;
  t.file = file;
  t.name = name;
  t.key = key;
  t.dtype = tensor.dtype();
  t.globalShape = sharedShape(ids, tensor);
  t.box = Box(shard.globalOffset(), shard.localShape());
  if (std::optional<FlatElementRange> flat = shard.flatRange())
    t.flat = *flat;
  return t;
}

uint32_t ShardSourceResolver::planSourceTensor(ShardId id) {
  uint32_t &tensor = sourceTensorIds_[id];
  if (tensor == kNoTensor) {
    tensor = static_cast<uint32_t>(state_.plan.sourceTensors.size());
    const ShardMetadata &source = *state_.source.metadata();
    ShardRef shard = source.shard(id);
    uint32_t file = planFile(state_.plan.sourceFiles, sourceIds_, shard);
    TensorRef tensor = source.tensor(shard.tensorId());
    state_.plan.sourceTensors.push_back(
        storedTensor(sourceIds_, tensor, interned(sourceIds_, tensor.keyId()),
                     interned(sourceIds_, shard.nameId()), shard, file));
  }
  return tensor;
}

std::optional<uint32_t>
ShardSourceResolver::transformOf(const EntryFacts &facts,
                                 std::string_view targetKey,
                                 size_t sourceRank, DType sourceType) {
  bool state = facts.optimizerState;
  auto sameUse = [&](const CachedTransform &c) {
    return c.sourceRank == sourceRank && c.sourceType == sourceType &&
           c.targetType == facts.targetType && c.state == state;
  };
  for (const CachedTransform &c : transformCache_)
    if (c.list == facts.postprocess && sameUse(c))
      return c.id;
  // A list seen at another address (the other finder's lists): the same
  // transform, found by its text once for this address.
  for (const CachedTransform &c : transformCache_)
    if (sameUse(c) && c.postprocess == *facts.postprocess) {
      CachedTransform alias = c;
      alias.list = facts.postprocess;
      transformCache_.push_back(std::move(alias));
      return c.id;
    }
  std::string why;
  std::optional<std::vector<plan::TransformStep>> steps =
      plan::parseTransformSteps(*facts.postprocess, sourceRank, why);
  if (!steps) {
    state_.diags.error(SourceLocation{}, "internal: transform of '" +
                                             std::string(targetKey) + "': " +
                                             why);
    return std::nullopt;
  }
  // Optimizer states keep their own precision: a cast written for the
  // model weight does not apply to them (casting a moment to float16 and
  // back would round it); they are cast once, to their stored dtype.
  if (state)
    steps->erase(std::remove_if(steps->begin(), steps->end(),
                                [](const plan::TransformStep &step) {
                                  return step.kind ==
                                         plan::TransformStep::Kind::Cast;
                                }),
                 steps->end());
  DType produced = plan::dtypeAfter(*steps, sourceType);
  if (produced != facts.targetType && isFloatingDType(produced) &&
      isFloatingDType(facts.targetType)) {
    plan::TransformStep cast;
    cast.kind = plan::TransformStep::Kind::Cast;
    cast.dtype = facts.targetType;
    steps->push_back(cast);
  }
  uint32_t id = state_.transforms.intern(*steps);
  transformCache_.push_back(CachedTransform{facts.postprocess,
                                            *facts.postprocess, sourceRank,
                                            sourceType, facts.targetType,
                                            state, id});
  return id;
}

namespace {

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
    ShardSourceResolver(state).run();
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    const plan::Plan &p = state.plan;
    for (const Transfer &t : state.transfers) {
      const plan::StoredTensor &src = p.sourceTensors[t.sourceTensor];
      const plan::StoredTensor &dst = p.destinationTensors[t.destinationTensor];
      os << dst.key << t.destinationRegion.toString() << " @"
         << t.destinationRank << " <- " << src.key << t.sourceRegion.toString()
         << " @" << t.sourceRank << " (" << p.sourceFiles[src.file].path << ")";
      for (const plan::TransformStep &step :
           state.transforms.transforms[t.transform])
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
