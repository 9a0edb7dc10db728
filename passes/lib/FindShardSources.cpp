//===- FindShardSources.cpp - Paddle's find_shard_sources ------------------===//
//
// Answers every target (each distinct destination shard, or each --queries
// target): the pieces of its bound view that overlap it, mapped back to
// regions of source keys, with the reference's entry order and postprocess
// strings (§8). Unlike the reference, every target must be covered exactly:
// a region left empty (its source removed) is an error naming the key and
// the element range, and so is a source key the checkpoint lacks.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/ir/OptimizerState.h"
#include "aoa/passes/CompilationState.h"
#include "ErrorBudget.h"

#include <memory>
#include <ostream>
#include <set>
#include <unordered_map>

namespace aoa {

namespace {

/// Views with more pieces than this get a PieceIndex.
constexpr size_t kIndexThreshold = 8;

class ShardSourceFinder {
public:
  explicit ShardSourceFinder(CompilationState &state)
      : state_(state), df_(state.dataflow), budget_(state.diags) {}

  void run() {
    if (state_.hasQueryFile || !state_.destination.present()) {
      for (size_t i = 0; i < state_.queries.size(); ++i) {
        queryAt_ = i < state_.queryLocations.size() ? state_.queryLocations[i]
                                                    : SourceLocation{};
        queryIndex_ = i;
        answer(state_.queries[i]);
      }
      return;
    }
    const ShardMetadata &metadata = *state_.destination.metadata();
    TensorDesc query;
    std::vector<ShardId> order;
    for (TensorId id : metadata.tensorIdsByKey()) {
      TensorRef tensor = metadata.tensor(id);
      for (ShardId shard : firstOfEachBox(tensor, order)) {
        ShardRef s = metadata.shard(shard);
        query.assign(tensor.key(), Box(s.globalOffset(), s.localShape()),
                     tensor.globalShape(), tensor.dtype());
        answer(query);
      }
    }
  }

private:
  /// The tensor's shards in file order, without replicas (equal boxes ask
  /// the same question; the first one asks it).
  static const std::vector<ShardId> &
  firstOfEachBox(TensorRef tensor, std::vector<ShardId> &order) {
    order.clear();
    for (ShardRef shard : tensor.shards())
      order.push_back(shard.id());
    if (order.size() < 2)
      return order;
    auto boxOf = [&](ShardId id) {
      ShardRef s = tensor.shards()[id - tensor.firstShard()];
      return std::make_pair(s.globalOffset(), s.localShape());
    };
    auto less = [&](ShardId a, ShardId b) {
      auto [oa, la] = boxOf(a);
      auto [ob, lb] = boxOf(b);
      if (oa != ob)
        return std::lexicographical_compare(oa.begin(), oa.end(), ob.begin(),
                                            ob.end());
      if (la != lb)
        return std::lexicographical_compare(la.begin(), la.end(), lb.begin(),
                                            lb.end());
      return a < b;
    };
    std::vector<ShardId> sorted = order;
    std::sort(sorted.begin(), sorted.end(), less);
    std::vector<bool> replica(order.size(), false);
    for (size_t i = 1; i < sorted.size(); ++i)
      if (boxOf(sorted[i]) == boxOf(sorted[i - 1]))
        replica[sorted[i] - tensor.firstShard()] = true;
    size_t kept = 0;
    for (ShardId id : order)
      if (!replica[id - tensor.firstShard()])
        order[kept++] = id;
    order.resize(kept);
    return order;
  }

  /// The next entry of the answer being built; entries are reused across
  /// answers so that their strings and vectors keep their memory.
  MappingEntry &nextEntry() {
    if (used_ == entries_.size())
      entries_.emplace_back();
    return entries_[used_++];
  }


  /// A diagnostic at the statement that wrote the target's view.
  InFlightDiagnostic reportAtBinding(const TargetBinding &binding,
                                     const std::string &key,
                                     std::string message) {
    // The statement wrote the model key when the target is one of its
    // optimizer states.
    std::string written =
        key.substr(0, key.size() - binding.suffix.size());
    return reportAtOp(state_, binding.producer, written, std::move(message));
  }

  /// The overlapping pieces, in piece order.
  std::vector<uint32_t> overlapping(const View &view, const Box &query) {
    if (view.pieces.size() > kIndexThreshold) {
      std::unique_ptr<PieceIndex> &index = indices_[&view];
      if (!index)
        index = std::make_unique<PieceIndex>(view);
      return index->overlapping(query);
    }
    std::vector<uint32_t> hits;
    for (uint32_t i = 0; i < view.pieces.size(); ++i)
      if (intersect(view.pieces[i].view, query))
        hits.push_back(i);
    return hits;
  }

  /// The stored source tensor `key`, or an error (once per key).
  std::optional<TensorRef> storedSource(const std::string &key,
                                        const TensorDesc &query,
                                        const TargetBinding &binding) {
    if (std::optional<TensorRef> t = state_.source.metadata()->find(key))
      return t;
    if (reportedMissing_.insert(key).second)
      reportAtBinding(binding, query.key,
                      "'" + query.key + "' needs the source key '" + key +
                          "', which the source checkpoint does not have")
          .hint(binding.suffix.empty()
                    ? "check the source metadata (--src)"
                    : "optimizer states follow their model key; the source "
                      "must store '" + key + "' for '" + query.key + "'");
    return std::nullopt;
  }

  void answer(const TensorDesc &query) {
    ++state_.answeredQueries;
    auto found = df_.targets.find(query.key);
    if (found == df_.targets.end() ||
        found->second.kind == TargetBinding::Kind::Missing)
      return; // reported by resolve-outputs
    const TargetBinding &binding = found->second;
    used_ = 0;
    if (binding.kind == TargetBinding::Kind::Added) {
      emit(query);
      return;
    }
    if (isBetaPowSuffix(binding.suffix))
      return answerBetaPow(query, binding);

    const View &view = *binding.view;
    Box box = query.box();
    if (query.globalShape != view.type.shape) {
      // Only a query file can ask this: destination shapes were checked.
      std::string where = "queries[" + std::to_string(queryIndex_) + "]: ";
      state_.diags
          .error(queryAt_,
                 query.globalShape.size() != view.type.shape.size()
                     ? where + "a rank-" +
                           std::to_string(query.globalShape.size()) +
                           " target for '" + query.key + "', which has rank " +
                           std::to_string(view.type.shape.size()) + " (" +
                           printTensorType(view.type) + ")"
                     : where + "global_shape " +
                           formatShape(query.globalShape) + " of '" +
                           query.key + "' differs from its shape " +
                           formatShape(view.type.shape))
          .hint("ask with the tensor's global shape");
      return;
    }
    bool modelWeight = binding.suffix.empty() &&
                       splitOptimizerSuffix(query.key).second.empty();
    int64_t covered = 0;
    const Piece *hole = nullptr;
    for (uint32_t i : overlapping(view, box)) {
      const Piece &piece = view.pieces[i];
      const InputTensor &input = df_.inputs[piece.input];
      Box region = *intersect(piece.view, box);
      if (input.removed) {
        hole = hole ? hole : &piece;
        continue;
      }
      std::string why;
      std::optional<Box> source = sourceRegionOf(piece, region, why);
      if (!source) {
        reportAtBinding(binding, query.key,
                        "cannot answer " + query.key + box.toString() + ": " +
                            why)
            .hint("the destination shards must hold whole reshaped blocks");
        return;
      }
      sourceKey_.assign(input.key).append(binding.suffix);
      const std::string &sourceKey = sourceKey_;
      std::optional<TensorRef> stored = storedSource(sourceKey, query, binding);
      if (!stored)
        return;
      DType sourceType = stored->dtype();
      DType produced = piece.transform->castTo.value_or(sourceType);
      if (modelWeight && produced != query.dtype) {
        if (reportedDType_.insert(query.key).second)
          reportAtBinding(binding, query.key,
                          "'" + query.key + "' is " +
                              std::string(dtypeName(query.dtype)) +
                              " but its source '" + sourceKey + "' gives " +
                              std::string(dtypeName(produced)))
              .hint("cast it: `" + query.key + " -> " + query.key + ", " +
                    spellCast(state_, query.dtype, produced) + "`");
        return;
      }
      MappingEntry &entry = nextEntry();
      entry.target.assign(query.key, region, query.globalShape, query.dtype);
      entry.source.assign(sourceKey, *source, stored->globalShape(),
                          sourceType);
      entry.postprocess = piece.transform->postprocess;
      covered += region.volume();
    }
    if (covered != box.volume()) {
      reportHole(query, binding, hole);
      return;
    }
    emit(query);
  }

  void reportHole(const TensorDesc &query, const TargetBinding &binding,
                  const Piece *hole) {
    if (!budget_.allow())
      return;
    Box box = query.box();
    if (!hole) {
      reportAtBinding(binding, query.key, "part of " + query.key +
                                            box.toString() +
                                            " has no source");
      return;
    }
    const InputTensor &input = df_.inputs[hole->input];
    Box region = *intersect(hole->view, box);
    const Op &remove = state_.ops[input.removedBy];
    reportAtBinding(binding, query.key,
                    query.key + region.toString() + " has no source: it comes "
                                                    "from '" +
                        input.key + "', which is removed")
        .note(remove.location, "removed here")
        .hint(binding.kind == TargetBinding::Kind::Identity
                  ? "keep the source, or add the destination key with `_ -> " +
                        query.key + "` to leave it as initialized"
                  : "keep the source: the statement that writes '" +
                        query.key + "' reads it");
  }

  /// Beta-pow accumulators are scalars any source of the model key can
  /// give: the first source in piece order that is not removed.
  void answerBetaPow(const TensorDesc &query, const TargetBinding &binding) {
    for (const Piece &piece : binding.view->pieces) {
      const InputTensor &input = df_.inputs[piece.input];
      if (input.removed)
        continue;
      std::string sourceKey = input.key + binding.suffix;
      std::optional<TensorRef> stored = storedSource(sourceKey, query, binding);
      if (!stored)
        return;
      Box whole = Box::fromShape(stored->globalShape());
      if (whole.shape() != query.localShape) {
        reportAtBinding(binding, query.key,
                        "'" + query.key + "' has shape " +
                            formatShape(query.localShape) + " but its source '" +
                            sourceKey + "' has shape " +
                            formatShape(whole.shape()));
        return;
      }
      MappingEntry &entry = nextEntry();
      entry.target = query;
      entry.source.assign(sourceKey, whole, stored->globalShape(),
                          stored->dtype());
      entry.postprocess.clear();
      emit(query);
      return;
    }
    if (budget_.allow())
      reportAtBinding(binding, query.key,
                      "'" + query.key + "' has no source: every source of its "
                                        "model key is removed")
          .hint("add it with `_ -> " + query.key + "`");
  }

  void emit(const TensorDesc &query) {
    state_.answeredEntries += used_;
    if (state_.mappingSink)
      state_.mappingSink(query, llvm::ArrayRef<MappingEntry>(entries_).take_front(used_));
  }

  CompilationState &state_;
  Dataflow &df_;
  std::unordered_map<const View *, std::unique_ptr<PieceIndex>> indices_;
  ErrorBudget budget_;
  SourceLocation queryAt_;
  size_t queryIndex_ = 0;
  std::set<std::string> reportedMissing_, reportedDType_;
  std::vector<MappingEntry> entries_;
  size_t used_ = 0;
  std::string sourceKey_;
};

class FindShardSourcesPass : public Pass {
public:
  const char *name() const override { return "find-shard-sources"; }
  const char *description() const override {
    return "answer every destination shard (or --queries target) with the "
           "source regions that fill it; check exact coverage";
  }
  bool run(CompilationState &state) override {
    state.answeredQueries = state.answeredEntries = 0;
    ShardSourceFinder(state).run();
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    os << "answered " << state.answeredQueries << " targets with "
       << state.answeredEntries << " entries\n";
  }
};

} // namespace

std::unique_ptr<Pass> createFindShardSourcesPass() {
  return std::make_unique<FindShardSourcesPass>();
}

} // namespace aoa
