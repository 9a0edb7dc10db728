//===- PieceAnswers.cpp - Destination pieces answered ahead ---------------===//
#include "PieceAnswers.h"

#include "aoa/ir/OptimizerState.h"

#include <algorithm>
#include <string>

namespace aoa {

namespace {

/// Destination tensors per chunk: enough that starting a thread per chunk
/// costs nothing beside answering it, few enough that a chunk's answers
/// stay small (a few MB) and the pass waits for one chunk at the start.
constexpr size_t kChunkTensors = 1024;
/// And at most about this many destination shards: with many replicas per
/// key (data parallelism over thousands of ranks) 1024 keys have millions
/// of shards, whose answers a chunk would hold at once.
constexpr size_t kChunkShards = 32768;

} // namespace

TargetUse targetUse(const TargetBinding *binding) {
  if (!binding || binding->kind == TargetBinding::Kind::Missing)
    return TargetUse::Skip;
  if (binding->kind == TargetBinding::Kind::Added)
    return TargetUse::Added;
  return TargetUse::Resolve;
}

llvm::SmallVector<FlatPiece, 1> storedPieces(ShardRef shard) {
  Box box(shard.globalOffset(), shard.localShape());
  llvm::SmallVector<FlatPiece, 1> pieces;
  if (std::optional<FlatElementRange> flat = shard.flatRange()) {
    std::vector<FlatPiece> boxes = flatRangeToBoxes(box, flat->begin, flat->end);
    pieces.append(std::make_move_iterator(boxes.begin()),
                  std::make_move_iterator(boxes.end()));
  } else {
    pieces.push_back(FlatPiece{std::move(box), 0});
  }
  return pieces;
}

PieceAnswers::PieceAnswers(CompilationState &state,
                           llvm::ArrayRef<TensorId> tensors, bool ahead)
    : state_(state), tensors_(tensors), ahead_(ahead),
      finder_(state, ShardSourceFinder::Silent{}) {
  finder_.setDetail(ShardSourceFinder::Detail::Facts);
  if (!ahead_)
    return;
  answering_.emplace();
  groupedSources_.assign(state_.source.metadata()->tensorCount(), false);
  // Every chunk is answered on the answering thread, the first beside the
  // pass's checks before its walk: the walk starts on an empty chunk, and
  // its first tensor waits for the first chunk.
  current_ = 1;
  startAfter(0, chunks_[0]);
}

PieceAnswers::Target PieceAnswers::findTarget(TensorId tensor) {
  return Target{tensor, state_.dataflow.targets.find(
                            *state_.destination.metadata(), tensor)};
}

void PieceAnswers::releaseTargets(std::vector<Target> &targets) {
  const ShardMetadata &destination = *state_.destination.metadata();
  for (const Target &target : targets)
    if (target.binding)
      state_.dataflow.targets.erase(destination, target.tensor);
  targets.clear();
}

size_t PieceAnswers::chunkEnd(size_t begin) const {
  const ShardMetadata &destination = *state_.destination.metadata();
  size_t end = begin, shards = 0;
  while (end < tensors_.size() && end - begin < kChunkTensors &&
         (end == begin || shards < kChunkShards))
    shards += destination.tensor(tensors_[end++]).shardCount();
  return end;
}

void PieceAnswers::startAfter(size_t previous, Chunk &chunk) {
  chunk.begin = previous;
  chunk.end = chunkEnd(previous);
  answering_->start([this, &chunk] {
    // The chunk's targets are those of tensors the walk has left: they go
    // first, beside the walk (which reads only its own tensors' targets).
    releaseTargets(chunk.targets);
    answer(chunk);
    groupReplicas(chunk);
  });
}

TargetUse PieceAnswers::beginTensor(size_t index) {
  if (!ahead_) {
    releaseTargets(walked_); // the walk has left its tensor
    walked_.push_back(findTarget(tensors_[index]));
    return targetUse(walked_.back().binding);
  }
  while (index >= chunks_[current_].end) {
    stopGrouping_ = true; // the walk needs the answers now
    answering_->wait();   // rethrows what the thread threw
    stopGrouping_ = false;
    current_ ^= 1;
    nextAnswer_ = 0;
    startAfter(chunks_[current_].end, chunks_[current_ ^ 1]);
  }
  currentTensor_ = index;
  return targetUse(binding());
}

std::optional<std::optional<uint32_t>>
PieceAnswers::keyInSourceStrings() const {
  if (!ahead_)
    return std::nullopt;
  const Chunk &chunk = chunks_[current_];
  uint32_t id = chunk.keyInSource[currentTensor_ - chunk.begin];
  if (id == kNotLookedUp)
    return std::nullopt;
  return id == kNotInSource ? std::optional<uint32_t>() : id;
}

bool PieceAnswers::tilesKey() const {
  if (!ahead_)
    return false;
  const Chunk &chunk = chunks_[current_];
  return chunk.tiles[currentTensor_ - chunk.begin];
}

const TargetBinding *PieceAnswers::binding() const {
  if (!ahead_)
    return walked_.empty() ? nullptr : walked_.back().binding;
  const Chunk &chunk = chunks_[current_];
  return chunk.targets[currentTensor_ - chunk.begin].binding;
}

PieceAnswers::Status PieceAnswers::next(llvm::ArrayRef<TensorId> &sources,
                                        llvm::ArrayRef<EntryFacts> &facts) {
  const Chunk &chunk = chunks_[current_];
  // Past the chunk's answers (a walk that asks for more pieces than the
  // tensors have), or not ahead: the caller answers.
  if (!ahead_ || nextAnswer_ >= chunk.answers.size())
    return Status::Ask;
  const PieceAnswer &answer = chunk.answers[nextAnswer_++];
  sources = llvm::ArrayRef<TensorId>(chunk.sources)
                .slice(answer.firstEntry, answer.entryCount);
  facts = llvm::ArrayRef<EntryFacts>(chunk.facts)
              .slice(answer.firstEntry, answer.entryCount);
  return answer.status;
}

void PieceAnswers::answer(Chunk &chunk) {
  chunk.targets.clear();
  chunk.tiles.clear();
  chunk.keyInSource.clear();
  chunk.answers.clear();
  chunk.sources.clear();
  chunk.facts.clear();
  chunk.replicas.clear();
  chunk.newSources.clear();
  const ShardMetadata &destination = *state_.destination.metadata();
  const ShardMetadata &source = *state_.source.metadata();
  TensorDesc query;
  for (size_t i = chunk.begin; i < chunk.end; ++i) {
    TensorRef tensor = destination.tensor(tensors_[i]);
    chunk.targets.push_back(findTarget(tensors_[i]));
    const TargetBinding *binding = chunk.targets.back().binding;
    bool resolved = targetUse(binding) == TargetUse::Resolve;
    chunk.tiles.push_back(resolved && shardsTileKey(tensor));
    if (!resolved) {
      chunk.keyInSource.push_back(kNotLookedUp);
      continue;
    }
    // The pass shares the key's string with the source's (a read of the
    // source's string pool).
    chunk.keyInSource.push_back(
        source.strings().find(tensor.key()).value_or(kNotInSource));
    for (ShardRef shard : tensor.shards())
      for (const FlatPiece &piece : storedPieces(shard)) {
        query.assign(tensor.key(), piece.box, tensor.globalShape(),
                     tensor.dtype());
        PieceAnswer answer;
        if (finder_.answer(query, binding)) {
          answer.status = Status::Answered;
          answer.firstEntry = uint32_t(chunk.facts.size());
          llvm::ArrayRef<EntryFacts> facts = finder_.facts();
          llvm::ArrayRef<TensorId> sources = finder_.entrySources();
          for (size_t e = 0; e < sources.size(); ++e) {
            chunk.facts.push_back(facts[e]);
            chunk.sources.push_back(sources[e]);
            if (!groupedSources_[sources[e]]) {
              groupedSources_[sources[e]] = true;
              chunk.newSources.push_back(sources[e]);
            }
          }
          answer.entryCount = uint32_t(chunk.facts.size()) - answer.firstEntry;
        } else {
          answer.status =
              finder_.gaveUp() ? Status::Ask : Status::Unanswered;
        }
        chunk.answers.push_back(answer);
      }
  }
}

void PieceAnswers::groupReplicas(Chunk &chunk) {
  const ShardMetadata &source = *state_.source.metadata();
  for (TensorId id : chunk.newSources) {
    if (stopGrouping_.load(std::memory_order_relaxed))
      break;
    chunk.replicas.emplace_back(id, CheckedReplicaGroups::of(source.tensor(id)));
  }
}

} // namespace aoa
