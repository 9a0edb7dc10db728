//===- FindShardSources.cpp - Paddle's find_shard_sources ------------------===//
//
// Answers every target (each distinct destination shard, or each --queries
// target) and hands the answers to the state's sink (--emit=mappings
// streams them out).
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "ShardSourceFinder.h"

#include <algorithm>
#include <ostream>

namespace aoa {

namespace {

  /// The tensor's shards in file order, without replicas (equal boxes ask
/// the same question; the first one asks it).
const std::vector<ShardId> &
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


class FindShardSourcesPass : public Pass {
public:
  const char *name() const override { return "find-shard-sources"; }
  const char *description() const override {
    return "answer every destination shard (or --queries target) with the "
           "source regions that fill it; check exact coverage";
  }
  bool run(CompilationState &state) override {
    state.answeredQueries = state.answeredEntries = 0;
    ShardSourceFinder finder(state);
    auto answer = [&](const TensorDesc &query) {
      ++state.answeredQueries;
      if (!finder.answer(query))
        return;
      state.answeredEntries += finder.entries().size();
      if (state.mappingSink)
        state.mappingSink(query, finder.entries());
    };
    if (state.hasQueryFile || !state.destination.present()) {
      for (size_t i = 0; i < state.queries.size(); ++i) {
        finder.setQueryIndex(i);
        answer(state.queries[i]);
      }
      return true;
    }
    const ShardMetadata &metadata = *state.destination.metadata();
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
