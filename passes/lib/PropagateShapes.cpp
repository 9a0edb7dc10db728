//===- PropagateShapes.cpp - Run the ops over views ------------------------===//
// Over 500 lines: one rule per op kind, and every rule of the reference with
// its own located diagnostic; the rules share one Propagator's dataflow state.
//
// Executes the ops in order over views (docs/compiler.md, "Views and pieces"): inputs are source
// keys seen whole; concat shifts pieces, split restricts them, permute, cast
// and reshape extend their transforms. Every rule of the reference is checked
// here with a located diagnostic: unknown names, axes (negative ones count
// from the end), even splits, concat ranks, extents and dtypes, permutations,
// cast dtypes, reshape shapes, and two statements writing one destination key.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/ir/IntegerList.h"
#include "aoa/ir/OptimizerState.h"
#include "aoa/passes/CompilationState.h"

#include <algorithm>
#include <ostream>
#include <set>

namespace aoa {

namespace {

class Propagator {
public:
  explicit Propagator(CompilationState &state)
      : state_(state), df_(state.dataflow) {}

  void run() {
    // Sized once: a large model's ops name hundreds of thousands of values,
    // and growing the table re-enters every name at each doubling.
    size_t count[2] = {0, 0}, bytes[2] = {0, 0}; // keys, temporaries
    for (const Op &op : state_.ops)
      for (const ValueName &result : op.results) {
        ++count[result.temporary];
        bytes[result.temporary] += result.text.size();
      }
    df_.values.reserve(count[0], bytes[0], count[1], bytes[1]);
    // (Destination names are among the keys: at most as many.)
    df_.outputs.reserve(count[0], bytes[0], 0, 0);
    // The names' slots are cache misses in tables of several MiB: they are
    // requested a few ops ahead, so that each op finds its names' slots.
    constexpr size_t kOpsAhead = 8;
    for (size_t i = 0; i < state_.ops.size(); ++i) {
      if (i + kOpsAhead < state_.ops.size())
        prefetchNames(state_.ops[i + kOpsAhead]);
      runOp(i, state_.ops[i]);
    }
  }

private:
  const Statement &statementOf(const Op &op) const {
    return state_.program.statements[op.statement];
  }
  InFlightDiagnostic error(const Op &op, SourceLocation location,
                           std::string message) {
    return reportAt(state_, statementOf(op), location, std::move(message));
  }

  void prefetchNames(const Op &op) const {
    const ShardMetadata *source = state_.source.metadata();
    for (const ValueName &name : op.operands) {
      df_.values.prefetch(name);
      if (!name.temporary && source) // read from the source, the first time
        source->strings().prefetch(name.text);
    }
    for (const ValueName &name : op.results)
      df_.values.prefetch(name);
  }

  std::optional<uint32_t> inputFor(const std::string &key) {
    return df_.inputFor(state_.source, key);
  }

  /// The value `name` holds for operand `i` of `op`: the latest assignment,
  /// else the source key. Unknown names are errors; names whose producing op
  /// failed give nullptr without a second error.
  std::optional<ViewRef> read(const Op &op, size_t i) {
    const ValueName &name = op.operands[i];
    if (NamedValue *value = df_.values.find(name)) {
      ++value->uses;
      return value->view;
    }
    if (!name.temporary)
      if (std::optional<uint32_t> id = inputFor(name.text)) {
        ++df_.inputUses[*id];
        return df_.inputs[*id].view;
      }
    auto d = error(op, op.operandLocations[i],
                   "'" + printValueName(name) +
                       "' is neither a source key nor assigned by an earlier "
                       "statement");
    std::vector<std::string_view> candidates = state_.source.names();
    df_.values.forEachKey([&](std::string_view assigned, const NamedValue &) {
      candidates.push_back(assigned);
    });
    std::string suggestion = closestSpelling(name.text, candidates);
    if (!suggestion.empty())
      d.hint("did you mean '" + suggestion + "'?");
    else
      d.hint("names on the left of '->' are keys of the source metadata "
             "(--src) or results of earlier statements");
    return std::nullopt;
  }

  bool isDestinationName(const ValueName &name) const {
    return !name.temporary && state_.destination.present() &&
           state_.destination.contains(name.text);
  }

  void assign(Op &op, size_t opIndex, size_t i, ViewRef view) {
    const ValueName &name = op.results[i];
    if (view)
      op.resultTypes.push_back(view->type);
    NamedValue value{std::move(view), opIndex, 0};
    if (isDestinationName(name)) {
      const NamedValue *previous = df_.outputs.find(name);
      bool readsItself = std::find(op.operands.begin(), op.operands.end(),
                                   name) != op.operands.end();
      if (previous && !readsItself && previous->producer != kNoOp) {
        const Op &first = state_.ops[previous->producer];
        error(op, op.resultLocations[i],
              "destination key '" + name.text +
                  "' is written by two statements")
            .note(first.location, "first written here")
            .hint("each destination region takes exactly one source; under "
                  "--reverse, two statements reading one name (a fan-out) "
                  "become two writers of it");
      }
      df_.outputs.assign(name, value);
    }
    df_.values.assign(name, std::move(value));
  }

  /// Marks the results of a failed op, so later reads fail quietly.
  void poison(Op &op, size_t opIndex) {
    op.resultTypes.clear();
    for (const ValueName &name : op.results)
      df_.values.assign(name, NamedValue{nullptr, opIndex, 0});
  }

  std::optional<size_t> normalizeAxis(const Op &op, size_t rank) {
    int64_t axis = op.axis < 0 ? op.axis + static_cast<int64_t>(rank) : op.axis;
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
      error(op, op.attributeLocation,
            "axis " + std::to_string(op.axis) + " is out of range for a " +
                std::to_string(rank) + "-dimensional tensor")
          .hint("axes go from " + std::to_string(-static_cast<int64_t>(rank)) +
                " to " + std::to_string(static_cast<int64_t>(rank) - 1));
      return std::nullopt;
    }
    return static_cast<size_t>(axis);
  }

  void runOp(size_t opIndex, Op &op) {
    if (op.kind == OpKind::Add) {
      df_.added.emplace(op.results[0].text, opIndex);
      return;
    }
    if (op.kind == OpKind::Remove)
      return runRemove(opIndex, op);
    std::vector<ViewRef> operands;
    operands.reserve(op.operands.size());
    for (size_t i = 0; i < op.operands.size(); ++i) {
      std::optional<ViewRef> view = read(op, i);
      if (!view || !*view)
        return poison(op, opIndex);
      operands.push_back(std::move(*view));
    }
    op.resultTypes.clear();
    op.resultTypes.reserve(op.results.size());
    bool ok = false;
    switch (op.kind) {
    case OpKind::Rename:
    case OpKind::Alias:
      assign(op, opIndex, 0, operands[0]);
      ok = true;
      break;
    case OpKind::Concat:
      ok = runConcat(opIndex, op, operands);
      break;
    case OpKind::Split:
      ok = runSplit(opIndex, op, *operands[0]);
      break;
    case OpKind::Permute:
      ok = runPermute(opIndex, op, *operands[0]);
      break;
    case OpKind::Cast:
      ok = runCast(opIndex, op, *operands[0]);
      break;
    case OpKind::Reshape:
      ok = runReshape(opIndex, op, operands[0]);
      break;
    case OpKind::Add:
    case OpKind::Remove:
      break;
    }
    if (!ok)
      poison(op, opIndex);
  }

  void runRemove(size_t opIndex, const Op &op) {
    const ValueName &name = op.operands[0];
    if (df_.values.contains(name)) {
      error(op, op.operandLocations[0],
            "'" + printValueName(name) +
                "' is a result of an earlier statement; only source keys can "
                "be removed")
          .hint("`key -> _` drops a source key from every answer");
      return;
    }
    std::optional<uint32_t> id =
        name.temporary ? std::nullopt : inputFor(name.text);
    if (!id) {
      auto d = error(op, op.operandLocations[0],
                     "cannot remove '" + printValueName(name) +
                         "': it is not a key of the source metadata");
      if (state_.program.reverse)
        d.note("--reverse turns `_ -> " + printValueName(name) +
               "` (add) into a removal of it from the source (--src)");
      std::string suggestion =
          closestSpelling(name.text, state_.source.names());
      if (!suggestion.empty())
        d.hint("did you mean '" + suggestion + "'?");
      return;
    }
    df_.inputs[*id].removed = true;
    df_.inputs[*id].removedBy = opIndex;
  }

  bool runConcat(size_t opIndex, Op &op, const std::vector<ViewRef> &inputs) {
    const TensorType &first = inputs[0]->type;
    std::optional<size_t> axis = normalizeAxis(op, first.shape.size());
    if (!axis)
      return false;
    TensorType type = first;
    type.shape[*axis] = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorType &t = inputs[i]->type;
      std::string what;
      if (t.dtype != first.dtype)
        what = "dtype " + std::string(dtypeName(t.dtype)) + " differs from " +
               std::string(dtypeName(first.dtype));
      else if (t.shape.size() != first.shape.size())
        what = "rank " + std::to_string(t.shape.size()) + " differs from " +
               std::to_string(first.shape.size());
      else
        for (size_t d = 0; d < t.shape.size(); ++d)
          if (d != *axis && t.shape[d] != first.shape[d])
            what = "extent " + std::to_string(t.shape[d]) + " along axis " +
                   std::to_string(d) + " differs from " +
                   std::to_string(first.shape[d]);
      if (!what.empty()) {
        error(op, op.operandLocations[i],
              "cannot concatenate '" + printValueName(op.operands[i]) + "' (" +
                  printTensorType(t) + "): its " + what + " of '" +
                  printValueName(op.operands[0]) + "' (" +
                  printTensorType(first) + ")")
            .hint(t.dtype != first.dtype
                      ? "cast it first: `" + printValueName(op.operands[i]) +
                            " -> " + printValueName(op.operands[i]) + ", " +
                            spellCast(state_, first.dtype, t.dtype) + "`"
                      : "concatenated tensors agree in every dimension but "
                        "the axis");
        return false;
      }
    }
    size_t count = 0;
    for (const ViewRef &input : inputs)
      count += input->pieces.size();
    std::vector<Piece> pieces;
    pieces.reserve(count);
    std::vector<int64_t> delta(first.shape.size(), 0);
    for (const ViewRef &input : inputs) {
      delta[*axis] = type.shape[*axis];
      for (const Piece &piece : input->pieces)
        pieces.push_back(Piece{piece.view.translate(delta), piece.input,
                               piece.source, piece.transform});
      type.shape[*axis] += input->type.shape[*axis];
    }
    assign(op, opIndex, 0, makeView(type, std::move(pieces)));
    return true;
  }

  bool runSplit(size_t opIndex, Op &op, const View &input) {
    std::optional<size_t> axis = normalizeAxis(op, input.type.shape.size());
    if (!axis)
      return false;
    int64_t parts = static_cast<int64_t>(op.results.size());
    int64_t extent = input.type.shape[*axis];
    if (extent % parts != 0) {
      error(op, op.attributeLocation,
            "cannot split '" + printValueName(op.operands[0]) + "' (" +
                printTensorType(input.type) + ") into " +
                std::to_string(parts) + " equal parts along axis " +
                std::to_string(*axis) + ": " + std::to_string(extent) +
                " is not a multiple of " + std::to_string(parts))
          .hint("splits are even; split into a divisor of " +
                std::to_string(extent) + " parts");
      return false;
    }
    int64_t size = extent / parts;
    TensorType partType = input.type;
    partType.shape[*axis] = size;
    std::vector<std::vector<Piece>> pieces(parts);
    Box whole = Box::fromShape(input.type.shape);
    llvm::SmallVector<Interval, 4> dims(whole.dims().begin(),
                                        whole.dims().end());
    std::vector<int64_t> delta(dims.size(), 0);
    // Each piece goes to the parts it overlaps: linear in the output.
    for (const Piece &piece : input.pieces) {
      const Interval &along = piece.view.dim(*axis);
      for (int64_t p = along.begin / size; p * size < along.end; ++p) {
        dims[*axis] = {p * size, (p + 1) * size};
        std::string why;
        std::optional<Piece> part = restrictPiece(piece, Box(dims), why);
        if (!part) {
          error(op, op.attributeLocation,
                "cannot split '" + printValueName(op.operands[0]) + "': " + why)
              .hint("split before the reshape, or along whole blocks");
          return false;
        }
        delta[*axis] = -p * size;
        part->view = part->view.translate(delta);
        pieces[p].push_back(std::move(*part));
      }
    }
    for (int64_t p = 0; p < parts; ++p)
      assign(op, opIndex, p, makeView(partType, std::move(pieces[p])));
    return true;
  }

  bool runPermute(size_t opIndex, Op &op, const View &input) {
    std::string why;
    std::optional<Permutation> p =
        Permutation::parse(op.permutation, input.type.shape.size(), &why);
    if (!p) {
      error(op, op.attributeLocation,
            "invalid permutation for '" + printValueName(op.operands[0]) +
                "' (" + printTensorType(input.type) + "): " + why)
          .hint("permute lists every axis once, e.g. permute='[1, 0]'; "
                "permute='[]' reverses all axes");
      return false;
    }
    // The reference records a permutation as written, except `'[]'` (full
    // reversal) and inverted ones (reverse mode), which it spells
    // canonically; the canonical form is kept beside it for plans.
    std::string_view spelling = op.permutation;
    std::optional<std::vector<int64_t>> axes = parseIntegerList(spelling);
    if (op.invertPermutation || !axes || axes->empty())
      spelling = {};
    if (op.invertPermutation)
      p = p->inverse();
    TensorType type = input.type;
    type.shape = p->apply(input.type.shape);
    std::vector<Piece> pieces;
    pieces.reserve(input.pieces.size());
    TransformCache cache;
    for (const Piece &piece : input.pieces)
      pieces.push_back(Piece{p->apply(piece.view), piece.input, piece.source,
                             cache.get(piece.transform, [&] {
                               return piece.transform->withPermutation(*p, spelling);
                             })});
    assign(op, opIndex, 0, makeView(type, std::move(pieces)));
    return true;
  }

  bool runCast(size_t opIndex, Op &op, const View &input) {
    // Every pair of castable dtypes casts (docs/language.md, "Casts");
    // values without a result are found by aoa-run, which sees the data.
    // The opaque dtypes are only moved.
    if (input.type.dtype != op.castTo && !isCastableDType(input.type.dtype)) {
      std::string from(dtypeName(input.type.dtype));
      error(op, op.attributeLocation,
            "cannot cast '" + printValueName(op.operands[0]) + "' from " +
                from + " to " + std::string(dtypeName(op.castTo)) + ": " +
                from + " is only moved, never cast")
          .hint("float8_e4m3fnuz, float8_e5m2fnuz and complex64 are copied "
                "unchanged; drop the cast");
      return false;
    }
    TensorType type = input.type;
    type.dtype = op.castTo;
    std::vector<Piece> pieces;
    pieces.reserve(input.pieces.size());
    TransformCache cache;
    for (const Piece &piece : input.pieces)
      pieces.push_back(Piece{piece.view, piece.input, piece.source,
                             cache.get(piece.transform, [&] {
                               return piece.transform->withCast(op.castTo);
                             })});
    assign(op, opIndex, 0, makeView(type, std::move(pieces)));
    return true;
  }

  /// Pieces of one view often share a transform; extending it once keeps
  /// them sharing.
  struct TransformCache {
    const Transform *from = nullptr;
    std::shared_ptr<const Transform> to;
    template <typename F>
    std::shared_ptr<const Transform>
    get(const std::shared_ptr<const Transform> &t, F &&make) {
      if (t.get() != from) {
        from = t.get();
        to = make();
      }
      return to;
    }
  };

  /// The destination's global shape for a reshape result: the key's own, or
  /// the one its optimizer states share; nullopt when the destination does
  /// not say (no layout, or an intermediate name).
  std::optional<std::vector<int64_t>> destinationShape(const Op &op,
                                                       const ValueName &name,
                                                       bool &ambiguous) {
    ambiguous = false;
    const ShardMetadata *metadata = state_.destination.metadata();
    if (!metadata || name.temporary)
      return std::nullopt;
    std::set<std::vector<int64_t>> shapes;
    auto consider = [&](const std::string &key) {
      if (std::optional<TensorRef> t = metadata->find(key))
        shapes.emplace(t->globalShape().begin(), t->globalShape().end());
    };
    consider(name.text);
    if (shapes.empty())
      for (std::string_view suffix : kOptimizerSuffixes)
        if (!isBetaPowSuffix(suffix))
          consider(name.text + std::string(suffix));
    if (shapes.empty())
      return std::nullopt;
    if (shapes.size() > 1) {
      ambiguous = true;
      std::string list;
      for (const std::vector<int64_t> &s : shapes)
        list += (list.empty() ? "" : ", ") + formatShape(s);
      error(op, op.resultLocations[0],
            "cannot reshape into '" + name.text +
                "': its destination keys have different shapes: " + list);
      return std::nullopt;
    }
    return *shapes.begin();
  }

  bool runReshape(size_t opIndex, Op &op, const ViewRef &input) {
    const std::vector<int64_t> &canonical = op.canonicalShape;
    int64_t trailing = 1;
    for (size_t d = 2; d < canonical.size(); ++d)
      trailing *= canonical[d];
    std::vector<int64_t> flattened{canonical[0] * canonical[1], trailing};
    bool ambiguous = false;
    std::optional<std::vector<int64_t>> target =
        destinationShape(op, op.results[0], ambiguous);
    if (ambiguous)
      return false;
    std::vector<int64_t> wanted = target ? *target : canonical;
    const std::vector<int64_t> &have = input->type.shape;
    if (have == wanted) {
      assign(op, opIndex, 0, input);
      return true;
    }
    bool unflatten = have == flattened && wanted == canonical;
    bool flatten = have == canonical && wanted == flattened;
    if (!unflatten && !flatten) {
      error(op, op.attributeLocation,
            "reshape converts between the flattened shape " +
                formatShape(flattened) + " and the canonical shape " +
                formatShape(canonical) + ", but '" +
                printValueName(op.operands[0]) + "' is " +
                formatShape(have) + " and '" + printValueName(op.results[0]) +
                "' must be " + formatShape(wanted))
          .hint("only the two leading dimensions merge or split: (c0*c1, "
                "prod(r)) <-> (c0, c1, r...)");
      return false;
    }
    int64_t w = canonical[1];
    ReshapeMarker marker{flatten, canonical};
    std::vector<Piece> pieces;
    TransformCache cache;
    for (const Piece &piece : input->pieces) {
      std::string problem;
      if (piece.transform->reshape)
        problem = "its data was reshaped before (`" +
                  piece.transform->reshape->text() + "`)";
      llvm::SmallVector<Interval, 4> dims;
      if (problem.empty() && unflatten) {
        const Interval &rows = piece.view.dim(0);
        if (rows.begin % w || rows.end % w || piece.view.dim(1).size() != trailing)
          problem = "the piece " + piece.view.toString() +
                    " is not a run of whole " + std::to_string(w) + "-row blocks";
        dims.push_back({rows.begin / w, rows.end / w});
        for (size_t d = 1; d < canonical.size(); ++d)
          dims.push_back({0, canonical[d]});
      } else if (problem.empty()) {
        for (size_t d = 1; d < canonical.size(); ++d)
          if (piece.view.dim(d).size() != canonical[d])
            problem = "the piece " + piece.view.toString() +
                      " does not hold whole blocks (it cuts dimension " +
                      std::to_string(d) + ")";
        const Interval &blocks = piece.view.dim(0);
        dims.push_back({blocks.begin * w, blocks.end * w});
        dims.push_back({0, trailing});
      }
      if (!problem.empty()) {
        error(op, op.attributeLocation,
              "cannot reshape '" + printValueName(op.operands[0]) + "': " +
                  problem)
            .hint("reshape works on data made of whole blocks of the leading "
                  "dimensions");
        return false;
      }
      pieces.push_back(Piece{Box(dims), piece.input, piece.source,
                             cache.get(piece.transform, [&] {
                               return piece.transform->withReshape(marker);
                             })});
    }
    TensorType type{wanted, input->type.dtype};
    assign(op, opIndex, 0, makeView(type, std::move(pieces)));
    return true;
  }

  CompilationState &state_;
  Dataflow &df_;
};

class PropagateShapesPass : public Pass {
public:
  const char *name() const override { return "propagate-shapes"; }
  const char *description() const override {
    return "run the ops over views of the source tensors; check axes, "
           "shapes, dtypes and permutations";
  }
  bool run(CompilationState &state) override {
    state.dataflow = Dataflow();
    Propagator(state).run();
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    printOps(state, os);
  }
};

} // namespace

std::unique_ptr<Pass> createPropagateShapesPass() {
  return std::make_unique<PropagateShapesPass>();
}

} // namespace aoa
