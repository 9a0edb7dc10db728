//===- PlanResolutionExecutor.h - A plan run on labels ----------*- C++ -*-===//
//
// The executor behind executePlan (PlanResolutionModel.h): it runs a plan
// element by element on labels (source key, index), round by round and
// phase by phase (PlanResolutionExecutor.cpp), and checks the plan's tensors,
// writes and destination contents against the case
// (PlanResolutionChecker.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_PASSES_PLANRESOLUTIONEXECUTOR_H
#define AOA_TEST_UNIT_PASSES_PLANRESOLUTIONEXECUTOR_H

#include "PlanResolutionModel.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace aoa::plan_resolution_test {

struct Label {
  int32_t key = -1;   ///< into the source key table
  int64_t index = -1; ///< row-major index of the global point in the key
  friend bool operator==(const Label &a, const Label &b) {
    return a.key == b.key && a.index == b.index;
  }
};

struct Buffer {
  bool defined = false;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<Label> data;
  int originRank = -1; ///< the rank whose read produced the data
  /// The read whose data this is: (rank, instruction index) in the round.
  std::pair<int, size_t> originRead{-1, 0};
};

/// Runs one plan of one case; run() returns every failure (at most 20).
class Executor {
public:
  Executor(const Case &c, const plan::Plan &plan, Stats &stats)
      : c_(c), plan_(plan), stats_(stats) {}

  std::vector<std::string> run();

private:
  /// The buffers of every rank in round `r`, while it runs.
  struct RoundState {
    size_t r = 0;
    std::string at; ///< "round R", for messages
    std::vector<std::vector<Buffer>> buffers;
    size_t readsInRound = 0;
    std::set<std::tuple<uint32_t, uint32_t, std::vector<int64_t>,
                        std::vector<int64_t>>>
        readsSeen;
  };

  // Running (PlanResolutionExecutor.cpp).
  void fail(std::string message);
  int32_t keyId(const std::string &key) const;
  void indexSources();
  static int phaseOf(plan::Opcode op);
  void runRound(size_t r);
  /// Buffer `id` of `rank` in the round; null (and a failure) if undeclared.
  Buffer *buffer(RoundState &round, uint32_t rank, uint32_t id);
  /// Declares the round's buffers; checks the instructions' phase order.
  void declareRound(RoundState &round);
  void runReads(RoundState &round);
  void read(RoundState &round, uint32_t rank, size_t n,
            const plan::Instruction &in);
  void exchangeMessages(RoundState &round);
  /// One message: `send` on `from` matched with `recv` on `to`.
  void deliver(RoundState &round, uint32_t from, const plan::Instruction &send,
               uint32_t to, const plan::Instruction &recv,
               const std::string &where);
  void runCopiesAndWrites(RoundState &round);
  void copy(RoundState &round, uint32_t rank, const plan::Instruction &in,
            const std::string &where);
  void checkRoundMemory(const RoundState &round);
  /// Applies a transform to labels: permutations move them, casts change
  /// only the dtype, reshape / flatten keep the row-major order.
  bool applyTransform(const std::vector<plan::TransformStep> &steps, Buffer &b,
                      std::string &why);

  // Checking against the case (PlanResolutionChecker.cpp).
  /// Every plan tensor is one of the generated shards, unchanged; every
  /// destination shard is in the plan exactly once.
  void matchTensors();
  /// Position of global point p in the stored data of t (-1 if not stored).
  static int64_t storedIndex(const plan::StoredTensor &t, const Point &p);
  void write(uint32_t rank, const plan::Instruction &in, Buffer *b,
             const std::string &at);
  void checkDestinations();

  const Case &c_;
  const plan::Plan &plan_;
  Stats &stats_;
  std::vector<std::string> errors_;
  std::map<std::string, int32_t> keyIds_;
  std::vector<std::vector<int64_t>> keyShapes_;
  /// Per source key, per element: bit r set when rank r stores it.
  std::vector<std::vector<uint8_t>> storedOnRank_;
  std::vector<const ShardSpec *> sourceSpecs_, destinationSpecs_;
  /// Per plan destination tensor, per stored element: writes and the label.
  std::vector<std::vector<std::pair<int, Label>>> written_;
  std::set<std::tuple<uint32_t, uint32_t, std::vector<int64_t>,
                      std::vector<int64_t>>>
      readsEver_;
  /// (source tensor, element) read so far (a tensor is read on one rank).
  std::set<std::pair<uint32_t, int64_t>> elementsRead_;
};

} // namespace aoa::plan_resolution_test

#endif // AOA_TEST_UNIT_PASSES_PLANRESOLUTIONEXECUTOR_H
