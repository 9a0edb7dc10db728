//===- ResolveOutputs.cpp - Which view answers each target key -------------===//
//
// With a destination layout, every destination key is bound (reference
// §7.12): to the view a statement wrote under its name; for an optimizer
// state, to the view written for its model key (the suffix is re-attached to
// the sources); to nothing when `_ -> key` adds it; otherwise to the
// same-named source key (identity). A key that is none of these is an error.
// Bound views must have the destination's shape, and model weights its dtype.
//
// Without a destination layout the targets are the leaves of the dataflow:
// source keys nothing reads and names nothing reads (never macro
// temporaries), each whole and unsharded, plus the optimizer states every
// source of a leaf has.
//
// A --queries target `k<suffix>` (an optimizer state) of a target model key
// `k` is bound like `k` with the suffix re-attached to its sources, whether
// or not the destination lists the state (reference §8.1).
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "ErrorBudget.h"
#include "aoa/ir/OptimizerState.h"
#include "aoa/passes/CompilationState.h"

#include <algorithm>
#include <ostream>
#include <set>

namespace aoa {

namespace {

class OutputResolver {
public:
  explicit OutputResolver(CompilationState &state)
      : state_(state), df_(state.dataflow), budget_(state.diags) {}

  void run() {
    df_.targets.reset(state_.destination.present()
                          ? state_.destination.metadata()
                          : nullptr);
    if (state_.destination.present()) {
      const ShardMetadata &metadata = *state_.destination.metadata();
      for (TensorId id : metadata.tensorIdsByKey())
        bindDestinationKey(metadata, id);
    } else {
      deriveLeaves();
    }
    for (size_t i = 0; i < state_.queries.size() && state_.hasQueryFile; ++i)
      checkQueryKey(i);
  }

  SourceLocation queryLocation(size_t i) const {
    return state_.locateQuery ? state_.locateQuery(i) : SourceLocation{};
  }

  /// A query names a destination key, or without a destination layout one
  /// of the derived outputs (reference: "not in the output_vars").
  void checkQueryKey(size_t i) {
    const std::string &key = state_.queries[i].key;
    if (df_.targets.find(key) || bindQueriedState(i))
      return;
    auto d = state_.diags.error(
        queryLocation(i),
        "queries[" + std::to_string(i) + "]: '" + key + "' is " +
            (state_.destination.present()
                 ? "not a key of " + state_.destination.describe()
                 : "not an output; without --dst the outputs are the names "
                   "no statement reads, and their optimizer states"));
    std::vector<std::string> known;
    for (const auto &target : df_.targets.sorted())
      known.emplace_back(target.first);
    std::string suggestion = closestSpelling(key, known);
    if (!suggestion.empty())
      d.hint("did you mean '" + suggestion + "'?");
  }

private:
  /// A query for `k<suffix>` where model key `k` is a target (listed by the
  /// destination, or derived) is answered from the sources of `k` with the
  /// suffix re-attached, as the reference does, even when the destination
  /// lists only `k`. False when `key` is no state of a target; a state the
  /// source lacks is reported at the query (and bound as Missing, so that
  /// find-shard-sources stays quiet about it).
  bool bindQueriedState(size_t i) {
    const std::string &key = state_.queries[i].key;
    auto [model, suffix] = splitOptimizerSuffix(key);
    if (suffix.empty())
      return false;
    const TargetBinding *modelTarget = df_.targets.find(model);
    if (!modelTarget || !modelTarget->suffix.empty())
      return false;
    TargetBinding binding = *modelTarget;
    binding.suffix = std::string(suffix);
    if (binding.view) {
      if (std::optional<std::string> missing = missingStateSource(binding)) {
        reportMissingState(i, model, *missing, binding);
        binding = TargetBinding{};
      }
    }
    df_.targets.insert(key, std::move(binding));
    return true;
  }

  /// The first source key (input key + suffix) the answer would read that
  /// the source does not store: any of the view's sources, or for a beta-pow
  /// accumulator the one it is taken from (the first not removed).
  std::optional<std::string> missingStateSource(const TargetBinding &binding) {
    const ShardMetadata &source = *state_.source.metadata();
    for (const Piece &piece : binding.view->pieces) {
      const InputTensor &input = df_.inputs[piece.input];
      if (input.removed)
        continue;
      if (!input.storedAs(source, binding.suffix))
        return input.key + binding.suffix;
      if (isBetaPowSuffix(binding.suffix))
        break;
    }
    return std::nullopt;
  }

  void reportMissingState(size_t i, std::string_view model,
                          const std::string &missing,
                          const TargetBinding &binding) {
    const std::string &key = state_.queries[i].key;
    auto d = state_.diags.error(
        queryLocation(i),
        "queries[" + std::to_string(i) + "]: '" + key +
            "' is an optimizer state of '" + std::string(model) +
            "' and needs the source key '" + missing + "', which " +
            state_.source.describe() + " does not have");
    if (binding.producer < state_.ops.size())
      d.note(state_.ops[binding.producer].location,
             "'" + std::string(model) + "' is written here");
    d.hint("optimizer states follow their model key: ask only for the "
           "states the source checkpoint stores");
  }

  /// What bind looked up for a model key, kept for the next call: the
  /// destination keys come in key order, so a model key and its optimizer
  /// states come one after the other and share these lookups.
  struct ModelLookup {
    std::string model;
    const NamedValue *assigned = nullptr;
    /// Dataflow::inputFor(model), once asked.
    std::optional<std::optional<uint32_t>> input;
  };

  ModelLookup &lookUpModel(std::string_view model) {
    if (!lastModel_ || lastModel_->model != model) {
      lastModel_.emplace();
      lastModel_->model = std::string(model);
      lastModel_->assigned =
          df_.outputs.find(ValueNameRef(lastModel_->model, false));
    }
    return *lastModel_;
  }

  TargetBinding bind(const std::string &key) {
    TargetBinding binding;
    auto [model, suffix] = splitOptimizerSuffix(key);
    ModelLookup &lookup = lookUpModel(model);
    const NamedValue *assigned =
        suffix.empty() ? lookup.assigned
                       : df_.outputs.find(ValueNameRef(key, false));
    if (!assigned && !suffix.empty())
      assigned = lookup.assigned;
    else
      suffix = {};
    if (assigned && assigned->view) {
      binding.kind = TargetBinding::Kind::Assigned;
      binding.view = assigned->view;
      binding.producer = assigned->producer;
      binding.suffix = std::string(suffix);
      return binding;
    }
    if (assigned)
      return binding; // its statement failed and was reported
    if (!df_.added.empty() &&
        (df_.added.count(key) || df_.added.count(std::string(model)))) {
      binding.kind = TargetBinding::Kind::Added;
      return binding;
    }
    if (!lookup.input)
      lookup.input = df_.inputFor(state_.source, lookup.model);
    std::optional<uint32_t> input = *lookup.input;
    if (!input) {
      if (budget_.allow())
        reportAtOp(state_, kNoOp, key,
                   "destination key '" + key + "' of " +
                       state_.destination.describe() + " is not in " +
                       state_.source.describe() +
                       " and no statement writes it")
            .hint("if the model has it but the checkpoint does not, add `_ -> " +
                  std::string(model) + "` to leave it as initialized");
      return binding;
    }
    binding.kind = TargetBinding::Kind::Identity;
    binding.view = df_.inputs[*input].view;
    binding.suffix = std::string(suffix);
    return binding;
  }

  void bindDestinationKey(const ShardMetadata &metadata, TensorId id) {
    TensorRef tensor = metadata.tensor(id);
    std::string key(tensor.key());
    TargetBinding binding = bind(key);
    if (binding.view && !isBetaPowSuffix(binding.suffix))
      checkType(key, tensor, binding);
    df_.targets.insert(metadata, id, std::move(binding));
  }

  void checkType(const std::string &key, TensorRef tensor,
                 const TargetBinding &binding) {
    const TensorType &type = binding.view->type;
    if (llvm::ArrayRef<int64_t>(type.shape) != tensor.globalShape()) {
      if (!budget_.allow())
        return;
      auto d = reportAtOp(
          state_, binding.producer, key,
          "destination key '" + key + "' has shape " +
              formatShape(tensor.globalShape()) +
              " but " +
              (binding.kind == TargetBinding::Kind::Identity
                   ? "the same-named key of " + state_.source.describe() + " has shape "
                   : std::string("this statement produces shape ")) +
              formatShape(type.shape));
      d.hint(binding.kind == TargetBinding::Kind::Identity
                 ? "write a statement that converts the source key, or fix "
                   "the layouts"
                 : "check the axes and the split/concat order; a transpose "
                   "(`A^T -> B`) swaps the shape");
      return;
    }
    // Paddle's dtype rule, for model weights only (optimizer states keep
    // their own dtypes).
    bool modelWeight = binding.suffix.empty() &&
                       splitOptimizerSuffix(key).second.empty();
    if (modelWeight && type.dtype != tensor.dtype() && budget_.allow())
      reportAtOp(state_, binding.producer, key,
                      "destination key '" + key + "' is " +
                          std::string(dtypeName(tensor.dtype())) + " but " +
                          (binding.kind == TargetBinding::Kind::Identity
                               ? "the same-named key of " + state_.source.describe() + " is "
                               : std::string("this statement produces ")) +
                          std::string(dtypeName(type.dtype)))
          .hint("cast it: `" + key + " -> " + key + ", " +
                spellCast(state_, tensor.dtype(), type.dtype) + "`");
  }

  /// A whole output is a target, unless a query file picks the targets.
  void addDerivedQuery(TensorDesc query) {
    if (!state_.hasQueryFile)
      state_.queries.push_back(std::move(query));
  }

  /// Without a destination: the dataflow's leaves and their states.
  void deriveLeaves() {
    std::set<std::string> leaves;
    df_.values.forEachKey([&](std::string_view name, const NamedValue &value) {
      if (value.view && value.uses == 0)
        leaves.insert(std::string(name));
    });
    for (std::string_view modelKey : state_.source.modelKeys()) {
      std::string key(modelKey);
      if (df_.values.contains(ValueNameRef(key, false)))
        continue;
      std::optional<uint32_t> id = df_.inputKeys.find(key);
      if (id && (df_.inputUses[*id] > 0 || df_.inputs[*id].removed))
        continue;
      leaves.insert(key);
    }
    const ShardMetadata &source = *state_.source.metadata();
    for (const std::string &leaf : leaves) {
      const NamedValue *value = df_.values.find(ValueNameRef(leaf, false));
      TargetBinding binding;
      if (value) {
        binding.kind = TargetBinding::Kind::Assigned;
        binding.view = value->view;
        binding.producer = value->producer;
      } else {
        std::optional<uint32_t> input = df_.inputFor(state_.source, leaf);
        if (!input)
          continue;
        binding.kind = TargetBinding::Kind::Identity;
        binding.view = df_.inputs[*input].view;
      }
      const TensorType &type = binding.view->type;
      std::vector<int64_t> zeros(type.shape.size(), 0);
      if (source.find(leaf) || binding.kind == TargetBinding::Kind::Assigned)
        addDerivedQuery(
            TensorDesc{leaf, zeros, type.shape, type.shape, type.dtype});
      for (std::string_view suffix : kOptimizerSuffixes)
        if (!leaves.count(leaf + std::string(suffix))) // explicit ones win
          addStateLeaf(leaf, std::string(suffix), binding, source);
      df_.targets.insert(leaf, std::move(binding));
    }
  }

  /// `leaf + suffix` is a target when every source of the leaf has that
  /// state.
  void addStateLeaf(const std::string &leaf, const std::string &suffix,
                    const TargetBinding &binding, const ShardMetadata &source) {
    std::optional<TensorRef> first;
    for (const Piece &piece : binding.view->pieces) {
      const InputTensor &input = df_.inputs[piece.input];
      if (input.removed)
        continue;
      std::optional<TensorRef> state = input.storedAs(source, suffix);
      if (!state)
        return;
      if (!first)
        first = state;
    }
    if (!first)
      return;
    TargetBinding stateBinding = binding;
    stateBinding.suffix = suffix;
    std::vector<int64_t> shape = binding.view->type.shape;
    if (isBetaPowSuffix(suffix))
      shape.assign(first->globalShape().begin(), first->globalShape().end());
    std::vector<int64_t> zeros(shape.size(), 0);
    addDerivedQuery(
        TensorDesc{leaf + suffix, zeros, shape, shape, first->dtype()});
    df_.targets.insert(leaf + suffix, std::move(stateBinding));
  }

  CompilationState &state_;
  Dataflow &df_;
  ErrorBudget budget_;
  std::optional<ModelLookup> lastModel_;
};

const char *bindingKindName(TargetBinding::Kind kind) {
  switch (kind) {
  case TargetBinding::Kind::Assigned:
    return "assigned";
  case TargetBinding::Kind::Identity:
    return "identity";
  case TargetBinding::Kind::Added:
    return "added";
  case TargetBinding::Kind::Missing:
    return "missing";
  }
  return "?";
}

class ResolveOutputsPass : public Pass {
public:
  const char *name() const override { return "resolve-outputs"; }
  const char *description() const override {
    return "bind every destination key to a view (assigned, optimizer "
           "state, identity or added); check shapes and dtypes";
  }
  bool run(CompilationState &state) override {
    OutputResolver(state).run();
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    for (const auto &[key, binding] : state.dataflow.targets.sorted()) {
      const TargetBinding &b = *binding;
      os << key << ": " << bindingKindName(b.kind);
      if (b.view)
        os << " " << printTensorType(b.view->type) << ", "
           << b.view->pieces.size()
           << (b.view->pieces.size() == 1 ? " piece" : " pieces");
      if (!b.suffix.empty())
        os << ", sources" << b.suffix;
      os << "\n";
    }
  }
};

} // namespace

std::unique_ptr<Pass> createResolveOutputsPass() {
  return std::make_unique<ResolveOutputsPass>();
}

} // namespace aoa
