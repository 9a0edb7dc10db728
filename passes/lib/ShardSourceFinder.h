//===- ShardSourceFinder.h - Answers for one target --------------*- C++ -*-===//
//
// Paddle's find_shard_sources for one target (reference §8): the pieces of
// the target's bound view that overlap it, mapped back to regions of source
// keys, with the reference's entry order and postprocess strings. Unlike the
// reference, the target must be covered exactly: a region left empty (its
// source removed) is an error naming the key and the element range, and so
// is a source key the checkpoint lacks. find-shard-sources and
// resolve-shard-sources both ask it.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_LIB_SHARDSOURCEFINDER_H
#define AOA_PASSES_LIB_SHARDSOURCEFINDER_H

#include "EntryFacts.h"
#include "ErrorBudget.h"
#include "aoa/ir/OptimizerState.h"
#include "aoa/passes/CompilationState.h"

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace aoa {

/// Views with more pieces than this get a PieceIndex.
constexpr size_t kPieceIndexThreshold = 8;

class ShardSourceFinder {
public:
  explicit ShardSourceFinder(CompilationState &state)
      : state_(state), df_(state.dataflow), budget_(state.diags) {}

  /// A finder for another thread, which never reports: where an answer
  /// would report (or would have, before a once-per-key message), it gives
  /// up instead (gaveUp()), so that the main thread's finder answers that
  /// target again and reports exactly what one thread would. It only reads
  /// the state.
  struct Silent {};
  ShardSourceFinder(CompilationState &state, Silent)
      : ShardSourceFinder(state) {
    silent_ = true;
  }

  /// Answers one target: true with the entries in entries(), or false
  /// after reporting why (or because resolve-outputs already did).
  bool answer(const TensorDesc &query) {
    return answer(query, df_.targets.find(query.key));
  }
  /// The same for the query's target found already (null: none), without
  /// reading Dataflow::targets.
  bool answer(const TensorDesc &query, const TargetBinding *binding) {
    return answerQuery(query, binding);
  }
  /// What an answer keeps of each entry.
  enum class Detail {
    Mapping, ///< the MappingEntry (entries()), as the mappings document
    Facts,   ///< what binding reads (facts()); no key or shape is copied
    Count,   ///< their number and sources only
  };
  void setDetail(Detail detail) { detail_ = detail; }
  /// The number of entries of the last successful answer.
  size_t entryCount() const { return used_; }
  /// The entries of the last successful answer (Detail::Mapping); valid
  /// until the next call.
  llvm::ArrayRef<MappingEntry> entries() const {
    return detail_ == Detail::Mapping
               ? llvm::ArrayRef<MappingEntry>(entries_).take_front(used_)
               : llvm::ArrayRef<MappingEntry>();
  }
  /// Their facts (Detail::Facts), whose postprocess lists live as long as
  /// the finder.
  llvm::ArrayRef<EntryFacts> facts() const {
    return detail_ == Detail::Facts
               ? llvm::ArrayRef<EntryFacts>(facts_).take_front(used_)
               : llvm::ArrayRef<EntryFacts>();
  }
  /// The stored source tensor of each entry (found while answering: a
  /// caller need not look its key up again).
  llvm::ArrayRef<TensorId> entrySources() const {
    return llvm::ArrayRef<TensorId>(entrySources_).take_front(used_);
  }
  /// The index of the next query in the query file (for diagnostics).
  void setQueryIndex(size_t index) { queryIndex_ = index; }
  /// Whether a silent finder gave the last answer up.
  bool gaveUp() const { return gaveUp_; }

private:
  /// True (and the answer given up) in a silent finder: called where an
  /// answer is about to report.
  bool giveUpSilently() {
    gaveUp_ = silent_;
    return silent_;
  }

  /// Records the next entry of the answer being built, to the finder's
  /// Detail: `region` of `query` comes from `sourceRegion` of stored source
  /// tensor `stored` (key `sourceKey`) through `transform` (null: none).
  /// Entries are reused across answers, so that their strings and vectors
  /// keep their memory.
  void addEntry(const TensorDesc &query, const Box &region, TensorRef stored,
                const Box &sourceRegion,
                const std::shared_ptr<const Transform> &transform) {
    if (used_ == entrySources_.size())
      entrySources_.emplace_back();
    entrySources_[used_] = stored.id();
    size_t at = used_++;
    if (detail_ == Detail::Facts) {
      if (at == facts_.size())
        facts_.emplace_back();
      EntryFacts &facts = facts_[at];
      facts.wanted = sourceRegion;
      facts.target = region;
      facts.optimizerState = queryIsState_;
      facts.targetType = query.dtype;
      facts.postprocess = transform ? &postprocessLists_.intern(transform)
                                    : &postprocessLists_.intern(kNoSteps);
      return;
    }
    if (detail_ != Detail::Mapping)
      return;
    if (at == entries_.size())
      entries_.emplace_back();
    MappingEntry &entry = entries_[at];
    entry.target.assign(query.key, region, query.globalShape, query.dtype);
    entry.source.assign(stored.key(), sourceRegion, stored.globalShape(),
                        stored.dtype());
    if (transform) {
      entry.postprocess = transform->postprocess;
      entry.postprocessAsWritten = transform->postprocessAsWritten;
    } else {
      entry.postprocess.clear();
      entry.postprocessAsWritten.clear();
    }
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
  std::vector<uint32_t> overlapping(const ViewRef &viewRef, const Box &query) {
    const View &view = *viewRef;
    if (view.pieces.size() > kPieceIndexThreshold) {
      // Queries come a destination key at a time, so a few indices serve
      // them; each holds its view, which resolve-shard-sources may release
      // from the dataflow meanwhile (Dataflow::targets).
      if (indices_.size() >= kPieceIndicesKept && !indices_.count(&view))
        indices_.clear();
      IndexedView &indexed = indices_[&view];
      if (!indexed.index) {
        indexed.view = viewRef;
        indexed.index = std::make_unique<PieceIndex>(view);
      }
      return indexed.index->overlapping(query);
    }
    std::vector<uint32_t> hits;
    for (uint32_t i = 0; i < view.pieces.size(); ++i)
      if (intersect(view.pieces[i].view, query))
        hits.push_back(i);
    return hits;
  }

  /// The stored source tensor input.key + binding.suffix, or an error (once
  /// per key).
  std::optional<TensorRef> storedSource(const InputTensor &input,
                                        const TensorDesc &query,
                                        const TargetBinding &binding) {
    if (std::optional<TensorRef> t =
            input.storedAs(*state_.source.metadata(), binding.suffix))
      return t;
    if (giveUpSilently())
      return std::nullopt;
    std::string key = input.key + binding.suffix;
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

  bool answerQuery(const TensorDesc &query, const TargetBinding *target) {
    if (!target || target->kind == TargetBinding::Kind::Missing)
      return false; // reported by resolve-outputs
    const TargetBinding &binding = *target;
    used_ = 0;
    gaveUp_ = false;
    // Facts say whether the target is an optimizer state: once per query.
    if (detail_ == Detail::Facts)
      queryIsState_ = !splitOptimizerSuffix(query.key).second.empty();
    if (binding.kind == TargetBinding::Kind::Added)
      return true;
    if (isBetaPowSuffix(binding.suffix))
      return answerBetaPow(query, binding);

    const View &view = *binding.view;
    Box box = query.box();
    if (query.globalShape != view.type.shape) {
      if (giveUpSilently())
        return false;
      // Only a query file can ask this: destination shapes were checked.
      std::string where = "queries[" + std::to_string(queryIndex_) + "]: ";
      state_.diags
          .error(state_.locateQuery ? state_.locateQuery(queryIndex_)
                                    : SourceLocation{},
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
      return false;
    }
    bool modelWeight = binding.suffix.empty() &&
                       splitOptimizerSuffix(query.key).second.empty();
    int64_t covered = 0;
    const Piece *hole = nullptr;
    for (uint32_t i : overlapping(binding.view, box)) {
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
        if (giveUpSilently())
          return false;
        reportAtBinding(binding, query.key,
                        "cannot answer " + query.key + box.toString() + ": " +
                            why)
            .hint("the destination shards must hold whole reshaped blocks");
        return false;
      }
      std::optional<TensorRef> stored = storedSource(input, query, binding);
      if (!stored)
        return false;
      DType sourceType = stored->dtype();
      DType produced = piece.transform->castTo.value_or(sourceType);
      if (modelWeight && produced != query.dtype) {
        if (giveUpSilently())
          return false;
        if (reportedDType_.insert(query.key).second)
          reportAtBinding(binding, query.key,
                          "'" + query.key + "' is " +
                              std::string(dtypeName(query.dtype)) +
                              " but its source '" + std::string(stored->key()) +
                              "' gives " + std::string(dtypeName(produced)))
              .hint("cast it: `" + query.key + " -> " + query.key + ", " +
                    spellCast(state_, query.dtype, produced) + "`");
        return false;
      }
      addEntry(query, region, *stored, *source, piece.transform);
      covered += region.volume();
    }
    if (covered != box.volume()) {
      if (giveUpSilently())
        return false;
      reportHole(query, binding, hole);
      return false;
    }
    return true;
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
  bool answerBetaPow(const TensorDesc &query, const TargetBinding &binding) {
    for (const Piece &piece : binding.view->pieces) {
      const InputTensor &input = df_.inputs[piece.input];
      if (input.removed)
        continue;
      std::optional<TensorRef> stored = storedSource(input, query, binding);
      if (!stored)
        return false;
      Box whole = Box::fromShape(stored->globalShape());
      if (whole.shape() != query.localShape) {
        if (giveUpSilently())
          return false;
        reportAtBinding(binding, query.key,
                        "'" + query.key + "' has shape " +
                            formatShape(query.localShape) +
                            " but its source '" + std::string(stored->key()) +
                            "' has shape " + formatShape(whole.shape()));
        return false;
      }
      addEntry(query, query.box(), *stored, whole, nullptr);
      return true;
    }
    if (giveUpSilently())
      return false;
    if (budget_.allow())
      reportAtBinding(binding, query.key,
                      "'" + query.key + "' has no source: every source of its "
                                        "model key is removed")
          .hint("add it with `_ -> " + query.key + "`");
    return false;
  }

  CompilationState &state_;
  Dataflow &df_;
  struct IndexedView {
    ViewRef view; ///< kept alive while its index is
    std::unique_ptr<PieceIndex> index;
  };
  static constexpr size_t kPieceIndicesKept = 64;
  std::unordered_map<const View *, IndexedView> indices_;
  ErrorBudget budget_;
  size_t queryIndex_ = 0;
  std::set<std::string> reportedMissing_, reportedDType_;
  inline static const std::vector<std::string> kNoSteps;
  Detail detail_ = Detail::Mapping;
  std::vector<MappingEntry> entries_;
  std::vector<EntryFacts> facts_;
  PostprocessLists postprocessLists_;
  std::vector<TensorId> entrySources_;
  size_t used_ = 0;
  /// The target of the query being answered is an optimizer state
  /// (Detail::Facts).
  bool queryIsState_ = false;
  bool silent_ = false;
  bool gaveUp_ = false;
};


} // namespace aoa

#endif // AOA_PASSES_LIB_SHARDSOURCEFINDER_H
