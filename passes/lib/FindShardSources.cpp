//===- FindShardSources.cpp - Paddle's find_shard_sources ------------------===//
//
// Answers every target (each distinct destination shard, or each --queries
// target) and hands the answers to the state's sink (--emit=mappings
// streams them out); answers that are only counted (--emit=mappings-count)
// are shared by the threads.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "ShardSourceFinder.h"
#include "aoa/runtime/support/ThreadPool.h"

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>

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


/// `query` for the box of `shard` of `tensor`.
void assignShardQuery(TensorDesc &query, TensorRef tensor, ShardRef shard) {
  query.assign(tensor.key(), Box(shard.globalOffset(), shard.localShape()),
               tensor.globalShape(), tensor.dtype());
}

/// The target of destination tensor `tensor` in the dataflow; null: none.
const TargetBinding *targetOf(const CompilationState &state,
                              TensorRef tensor) {
  return state.dataflow.targets.find(*state.destination.metadata(),
                                     tensor.id());
}

/// Destination tensors per task of countInParallel: enough that a task
/// costs nothing to start beside its answers, small enough to share the work.
constexpr size_t kTensorsPerTask = 1024;

/// Counts the answers to every distinct destination shard (--emit=
/// mappings-count) on state.threads threads, each task of kTensorsPerTask
/// tensors with a silent finder of its own (the pass's other work only reads
/// the dataflow). A query a silent finder gives up would report something:
/// `finder` answers those again afterwards, in the walk's order, so the
/// diagnostics are those of one thread.
void countInParallel(CompilationState &state, ShardSourceFinder &finder) {
  const ShardMetadata &metadata = *state.destination.metadata();
  llvm::ArrayRef<TensorId> tensors = metadata.tensorIdsByKey();
  struct TaskCount {
    size_t queries = 0, entries = 0;
    std::vector<ShardId> givenUp; ///< in the walk's order
  };
  std::vector<TaskCount> counts((tensors.size() + kTensorsPerTask - 1) /
                                kTensorsPerTask);
  runtime::ThreadPool pool(state.threads);
  (void)pool.parallelFor(counts.size(), [&](size_t task) {
    ShardSourceFinder silent(state, ShardSourceFinder::Silent{});
    silent.setDetail(ShardSourceFinder::Detail::Count);
    TaskCount &count = counts[task];
    TensorDesc query;
    std::vector<ShardId> order;
    size_t end = std::min(tensors.size(), (task + 1) * kTensorsPerTask);
    for (size_t i = task * kTensorsPerTask; i < end; ++i) {
      TensorRef tensor = metadata.tensor(tensors[i]);
      const TargetBinding *binding = targetOf(state, tensor);
      for (ShardId shard : firstOfEachBox(tensor, order)) {
        assignShardQuery(query, tensor, metadata.shard(shard));
        ++count.queries;
        if (silent.answer(query, binding))
          count.entries += silent.entryCount();
        else if (silent.gaveUp())
          count.givenUp.push_back(shard);
      }
    }
    return runtime::Status();
  }); // no task fails
  TensorDesc query;
  for (const TaskCount &count : counts) {
    state.answeredQueries += count.queries;
    state.answeredEntries += count.entries;
    for (ShardId shard : count.givenUp) {
      ShardRef s = metadata.shard(shard);
      TensorRef tensor = metadata.tensor(s.tensorId());
      assignShardQuery(query, tensor, s);
      if (finder.answer(query, targetOf(state, tensor)))
        state.answeredEntries += finder.entryCount();
    }
  }
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
    // A count keeps nothing of the entries.
    if (!state.mappingSink)
      finder.setDetail(ShardSourceFinder::Detail::Count);
    auto answer = [&](const TensorDesc &query,
                      const TargetBinding *binding) {
      ++state.answeredQueries;
      if (!finder.answer(query, binding))
        return;
      state.answeredEntries += finder.entryCount();
      if (state.mappingSink)
        state.mappingSink(query, finder.entries());
    };
    if (state.hasQueryFile || !state.destination.present()) {
      for (size_t i = 0; i < state.queries.size(); ++i) {
        finder.setQueryIndex(i);
        answer(state.queries[i],
               state.dataflow.targets.find(state.queries[i].key));
      }
      return true;
    }
    // Answers that are only counted need no order: threads share them.
    if (state.threads > 1 && !state.mappingSink) {
      countInParallel(state, finder);
      return true;
    }
    const ShardMetadata &metadata = *state.destination.metadata();
    TensorDesc query;
    std::vector<ShardId> order;
    for (TensorId id : metadata.tensorIdsByKey()) {
      TensorRef tensor = metadata.tensor(id);
      const TargetBinding *binding = targetOf(state, tensor);
      for (ShardId shard : firstOfEachBox(tensor, order)) {
        assignShardQuery(query, tensor, metadata.shard(shard));
        answer(query, binding);
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
