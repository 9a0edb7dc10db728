//===- DeriveDestination.cpp - The layout a plan without --dst writes
//------===//
//
// Without a destination layout, resolve-outputs derives the targets (the
// dataflow's leaves and their optimizer states), each whole and unsharded,
// as --emit=mappings answers them. A plan needs a layout to write, so this
// pass makes the one those targets describe: one tensor per target, its
// dtype and shape from the statements, all of them stored whole by rank 0
// in one file, or the layout the driver makes of them
// (CompilationState::layoutDerivedDestination: a Hugging Face directory, a
// pattern layout spec). resolve-shard-sources then plans it like a --dst
// layout. With --dst the pass does nothing.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/passes/CompilationState.h"

#include <ostream>

namespace aoa {

namespace {

class DeriveDestinationPass : public Pass {
public:
  const char *name() const override { return "derive-destination"; }
  const char *description() const override {
    return "without --dst: the layout of the derived targets (each whole, "
           "rank 0, one file)";
  }

  bool run(CompilationState &state) override {
    if (state.destination.present())
      return true;
    // resolve-outputs listed every derived target whole, in the order
    // --emit=mappings answers them (a query file never reaches a plan).
    ShardMetadataBuilder builder;
    for (const TensorDesc &target : state.queries) {
      if (!builder.addTensor(target.key, target.dtype, target.globalShape)) {
        state.diags
            .error(SourceLocation{},
                   "cannot derive the destination layout: the target '" +
                       target.key +
                       "' appears twice or has too many "
                       "dimensions")
            .hint("pass the destination layout with --dst");
        return false;
      }
      std::vector<int64_t> origin(target.globalShape.size(), 0);
      builder.addShard(0, kDerivedDestinationFile, target.key, origin,
                       target.globalShape);
    }
    state.derivedDestination =
        std::make_unique<ShardMetadata>(builder.finish());
    if (state.layoutDerivedDestination) {
      state.derivedDestination =
          state.layoutDerivedDestination(*state.derivedDestination);
      if (!state.derivedDestination)
        return false;
    }
    state.destination = KeySpace(*state.derivedDestination, "destination");
    return true;
  }

  void print(const CompilationState &state, std::ostream &os) const override {
    if (!state.derivedDestination) {
      os << "the destination layout is given (--dst)\n";
      return;
    }
    const ShardMetadata &layout = *state.derivedDestination;
    // One line per key whole on one rank (the usual case), else per shard.
    for (TensorId id : layout.tensorIdsByKey()) {
      TensorRef tensor = layout.tensor(id);
      for (ShardRef shard : tensor.shards()) {
        os << tensor.key() << ": " << dtypeName(tensor.dtype())
           << formatShape(tensor.globalShape());
        if (shard.localShape() != tensor.globalShape() ||
            shard.flatRange())
          os << " box " << Box(shard.globalOffset(), shard.localShape()).toString()
             << (shard.flatRange() ? " (flat)" : "");
        os << " @" << shard.rank() << " " << shard.file() << "\n";
      }
    }
  }
};

} // namespace

std::unique_ptr<Pass> createDeriveDestinationPass() {
  return std::make_unique<DeriveDestinationPass>();
}

} // namespace aoa
