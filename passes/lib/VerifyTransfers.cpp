//===- VerifyTransfers.cpp - Every destination element exactly once --------===//
//
// The last check before scheduling, over the transfers themselves (near
// linear: a sort and a sweep per destination tensor, on --threads threads):
// every element of every stored destination tensor is written exactly once,
// every read region lies in its stored source tensor, and every transform
// ends in the destination's dtype. Violations name the key, the file and the
// element ranges.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "ErrorBudget.h"
#include "aoa/ir/BoxOverlap.h"
#include "aoa/passes/CompilationState.h"
#include "aoa/runtime/support/ThreadPool.h"

#include <algorithm>
#include <ostream>

namespace aoa {

namespace {

/// The stored elements of `t` inside `region`: the region's volume, or for
/// a flat range only the part of it that is stored.
bool regionIsStored(const plan::StoredTensor &t, const Box &region) {
  if (!t.box.contains(region))
    return false;
  if (!t.flat || region.isEmpty())
    return true;
  std::vector<int64_t> first = region.offsets(), last(region.rank());
  for (size_t i = 0; i < region.rank(); ++i)
    last[i] = region.dim(i).end - 1;
  std::optional<int64_t> a = rowMajorIndex(t.box, first);
  std::optional<int64_t> b = rowMajorIndex(t.box, last);
  return a && b && *a >= t.flat->begin && *b < t.flat->end;
}

class Verifier {
public:
  explicit Verifier(CompilationState &state)
      : state_(state), budget_(state.diags) {}

  void run() {
    checkTransfers();
    checkCoverage();
  }

private:
  void report(std::string message) {
    if (budget_.allow())
      state_.diags.error(SourceLocation{}, std::move(message));
  }

  /// Runs `problemsOf(i, problems)` for i in [0, count) on --threads
  /// threads, a block of indices per task (one check is too small a task),
  /// and reports the problems in index order, so the messages do not depend
  /// on the thread count.
  template <typename ProblemsOf>
  void checkInBlocks(size_t count, ProblemsOf problemsOf) {
    constexpr size_t kBlock = 512, kBlocksAtOnce = 64;
    std::vector<std::vector<std::string>> problems;
    for (size_t first = 0; first < count; first += kBlock * kBlocksAtOnce) {
      size_t blocks =
          std::min(kBlocksAtOnce, (count - first + kBlock - 1) / kBlock);
      problems.assign(blocks, {});
      runtime::Status checked = pool_.parallelFor(blocks, [&](size_t b) {
        size_t begin = first + b * kBlock;
        size_t end = std::min(count, begin + kBlock);
        for (size_t i = begin; i < end; ++i)
          problemsOf(i, problems[b]);
        return runtime::Status();
      });
      (void)checked; // the checks cannot fail
      for (std::vector<std::string> &found : problems)
        for (std::string &problem : found)
          report(std::move(problem));
    }
  }

  /// Every transfer reads a stored source region, writes a stored
  /// destination region and ends in the destination's dtype.
  void checkTransfers() {
    const plan::Plan &plan = state_.plan;
    checkInBlocks(state_.transfers.size(), [&](size_t i,
                                               std::vector<std::string> &found) {
      const Transfer &t = state_.transfers[i];
      const plan::StoredTensor &src = plan.sourceTensors[t.sourceTensor];
      const plan::StoredTensor &dst = plan.destinationTensors[t.destinationTensor];
      if (!regionIsStored(src, t.sourceRegion))
        found.push_back("reads " + src.key + t.sourceRegion.toString() +
                        " from '" + plan.sourceFiles[src.file].path +
                        "', which stores only " + src.key +
                        src.box.toString() + (src.flat ? " (flat range)" : ""));
      if (!regionIsStored(dst, t.destinationRegion))
        found.push_back("writes " + dst.key + t.destinationRegion.toString() +
                        " into '" + plan.destinationFiles[dst.file].path +
                        "', which stores only " + dst.key + dst.box.toString());
      DType produced =
          plan::dtypeAfter(state_.transforms.transforms[t.transform], src.dtype);
      if (produced != dst.dtype)
        found.push_back("'" + dst.key + "' is " +
                        std::string(dtypeName(dst.dtype)) + " but its source '" +
                        src.key + "' arrives as " +
                        std::string(dtypeName(produced)));
    });
  }

  /// Every destination tensor's written regions must not overlap and must
  /// add up to the stored tensor. The transfers are grouped by tensor in one
  /// array (a counting sort), and the tensors checked in blocks.
  void checkCoverage() {
    const std::vector<Transfer> &transfers = state_.transfers;
    size_t tensors = state_.plan.destinationTensors.size();
    std::vector<size_t> start(tensors + 1, 0);
    for (const Transfer &t : transfers)
      ++start[t.destinationTensor + 1];
    for (size_t d = 0; d < tensors; ++d)
      start[d + 1] += start[d];
    std::vector<size_t> order(transfers.size());
    std::vector<size_t> next(start.begin(), start.end() - 1);
    for (size_t i = 0; i < transfers.size(); ++i)
      order[next[transfers[i].destinationTensor]++] = i;

    checkInBlocks(tensors, [&](size_t d, std::vector<std::string> &found) {
      std::string problem = coverageProblem(
          d, llvm::ArrayRef<size_t>(order).slice(start[d],
                                                   start[d + 1] - start[d]));
      if (!problem.empty())
        found.push_back(std::move(problem));
    });
  }

  /// What is wrong with destination tensor `d`'s `writes` (transfer
  /// indices), or "".
  std::string coverageProblem(size_t d, llvm::ArrayRef<size_t> writes) const {
    const plan::StoredTensor &dst = state_.plan.destinationTensors[d];
    const std::string &file = state_.plan.destinationFiles[dst.file].path;
    auto regionOf = [&](size_t i) -> const Box & {
      return state_.transfers[i].destinationRegion;
    };
    int64_t written = 0;
    for (size_t i : writes)
      written += regionOf(i).volume();
    std::vector<const Box *> regions;
    regions.reserve(writes.size());
    for (size_t i : writes)
      regions.push_back(&regionOf(i));
    if (std::optional<Box> common = findOverlap(regions))
      return dst.key + common->toString() + " in '" + file +
             "' is written twice";
    if (written != dst.storedElements())
      return dst.key + dst.box.toString() + " in '" + file + "': " +
             std::to_string(dst.storedElements() - written) + " of its " +
             std::to_string(dst.storedElements()) +
             " elements have no source";
    return "";
  }

  CompilationState &state_;
  ErrorBudget budget_;
  runtime::ThreadPool pool_{state_.threads};
};

class VerifyPass : public Pass {
public:
  const char *name() const override { return "verify"; }
  const char *description() const override {
    return "check that every destination element is written exactly once "
           "from a stored source region, in the destination's dtype";
  }
  bool run(CompilationState &state) override {
    Verifier(state).run();
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    os << "verified " << state.transfers.size() << " transfers into "
       << state.plan.destinationTensors.size() << " destination tensors\n";
  }
};

} // namespace

std::unique_ptr<Pass> createVerifyPass() {
  return std::make_unique<VerifyPass>();
}

} // namespace aoa
