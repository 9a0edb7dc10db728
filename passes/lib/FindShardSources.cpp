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

#include <memory>
#include <ostream>
#include <set>
#include <unordered_map>

namespace aoa {

namespace {

/// Views with more pieces than this get a PieceIndex.
constexpr size_t kIndexThreshold = 8;

TensorDesc describe(std::string key, const Box &box,
                    llvm::ArrayRef<int64_t> globalShape, DType dtype) {
  return TensorDesc{std::move(key), box.offsets(), box.shape(),
                    std::vector<int64_t>(globalShape.begin(), globalShape.end()),
                    dtype};
}

class ShardSourceFinder {
public:
  explicit ShardSourceFinder(CompilationState &state)
      : state_(state), df_(state.dataflow) {}

  void run() {
    if (state_.hasQueryFile || !state_.destination.present()) {
      for (const TensorDesc &query : state_.queries)
        answer(query);
      return;
    }
    const ShardMetadata &metadata = *state_.destination.metadata();
    for (TensorId id : metadata.tensorIdsByKey()) {
      TensorRef tensor = metadata.tensor(id);
      std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> seen;
      std::vector<int64_t> global(tensor.globalShape().begin(),
                                  tensor.globalShape().end());
      for (ShardRef shard : tensor.shards()) {
        std::vector<int64_t> offset(shard.globalOffset().begin(),
                                    shard.globalOffset().end());
        std::vector<int64_t> local(shard.localShape().begin(),
                                   shard.localShape().end());
        // Replicas ask the same question; answer it once.
        if (tensor.shardCount() > 1 && !seen.emplace(offset, local).second)
          continue;
        answer(TensorDesc{std::string(tensor.key()), std::move(offset),
                          std::move(local), global, tensor.dtype()});
      }
    }
  }

private:
  InFlightDiagnostic errorAtProducer(size_t producer, std::string message) {
    if (producer == kNoOp)
      return state_.diags.error(SourceLocation{}, std::move(message));
    const Op &op = state_.ops[producer];
    return reportAt(state_, state_.program.statements[op.statement],
                    op.location, std::move(message));
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
      errorAtProducer(binding.producer,
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
    Mapping mapping{query, {}};
    if (binding.kind == TargetBinding::Kind::Added) {
      emit(mapping);
      return;
    }
    if (isBetaPowSuffix(binding.suffix))
      return answerBetaPow(query, binding, std::move(mapping));

    const View &view = *binding.view;
    Box box = query.box();
    if (box.rank() != view.type.shape.size() ||
        !Box::fromShape(view.type.shape).contains(box)) {
      errorAtProducer(binding.producer,
                      "target " + query.key + box.toString() +
                          " lies outside '" + query.key + "' (" +
                          printTensorType(view.type) + ")");
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
        errorAtProducer(binding.producer,
                        "cannot answer " + query.key + box.toString() + ": " +
                            why)
            .hint("the destination shards must hold whole reshaped blocks");
        return;
      }
      std::string sourceKey = input.key + binding.suffix;
      std::optional<TensorRef> stored = storedSource(sourceKey, query, binding);
      if (!stored)
        return;
      DType sourceType = stored->dtype();
      DType produced = piece.transform->castTo.value_or(sourceType);
      if (modelWeight && produced != query.dtype) {
        if (reportedDType_.insert(query.key).second)
          errorAtProducer(binding.producer,
                          "'" + query.key + "' is " +
                              std::string(dtypeName(query.dtype)) +
                              " but its source '" + sourceKey + "' gives " +
                              std::string(dtypeName(produced)))
              .hint("cast it: `" + query.key + " -> " + query.key +
                    ", dtype='" + std::string(dtypeName(query.dtype)) + "'`");
        return;
      }
      mapping.entries.push_back(MappingEntry{
          describe(query.key, region, query.globalShape, query.dtype),
          describe(sourceKey, *source, stored->globalShape(), sourceType),
          piece.transform->postprocess});
      covered += region.volume();
    }
    if (covered != box.volume()) {
      reportHole(query, binding, hole);
      return;
    }
    emit(mapping);
  }

  void reportHole(const TensorDesc &query, const TargetBinding &binding,
                  const Piece *hole) {
    if (!reportedHole_.insert(query.key).second)
      return;
    Box box = query.box();
    if (!hole) {
      errorAtProducer(binding.producer, "part of " + query.key +
                                            box.toString() +
                                            " has no source");
      return;
    }
    const InputTensor &input = df_.inputs[hole->input];
    Box region = *intersect(hole->view, box);
    const Op &remove = state_.ops[input.removedBy];
    errorAtProducer(binding.producer,
                    query.key + region.toString() + " has no source: it comes "
                                                    "from '" +
                        input.key + "', which is removed")
        .note(remove.location, "removed here")
        .hint("keep the source, or add the destination key with `_ -> " +
              query.key + "` to leave it as initialized");
  }

  /// Beta-pow accumulators are scalars any source of the model key can
  /// give: the first source in piece order that is not removed.
  void answerBetaPow(const TensorDesc &query, const TargetBinding &binding,
                     Mapping mapping) {
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
        errorAtProducer(binding.producer,
                        "'" + query.key + "' has shape " +
                            formatShape(query.localShape) + " but its source '" +
                            sourceKey + "' has shape " +
                            formatShape(whole.shape()));
        return;
      }
      mapping.entries.push_back(MappingEntry{
          query, describe(sourceKey, whole, stored->globalShape(), stored->dtype()),
          {}});
      emit(mapping);
      return;
    }
    if (reportedHole_.insert(query.key).second)
      errorAtProducer(binding.producer,
                      "'" + query.key + "' has no source: every source of its "
                                        "model key is removed")
          .hint("add it with `_ -> " + query.key + "`");
  }

  void emit(const Mapping &mapping) {
    state_.answeredEntries += mapping.entries.size();
    if (state_.mappingSink)
      state_.mappingSink(mapping);
  }

  CompilationState &state_;
  Dataflow &df_;
  std::unordered_map<const View *, std::unique_ptr<PieceIndex>> indices_;
  std::set<std::string> reportedMissing_, reportedDType_, reportedHole_;
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
