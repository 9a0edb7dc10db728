//===- PlanResolutionModel.h - Random cases and a brute-force plan checker -===//
//
// The shared half of the PlanResolution*Test files (passes/): random source
// and destination layouts and statements with a brute-force model of what
// each destination element must hold, the in-process compile, and an
// executor that runs a plan element by element on labels, sharing no code
// with runtime/ (PlanResolutionExecutor.cpp lists what it checks).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_PASSES_PLANRESOLUTIONMODEL_H
#define AOA_TEST_UNIT_PASSES_PLANRESOLUTIONMODEL_H

#include "BruteForce.h"

#include "aoa/ir/Box.h"
#include "aoa/ir/DType.h"
#include "aoa/ir/FlatRange.h"
#include "aoa/ir/Plan.h"
#include "aoa/ir/ShardMetadata.h"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace aoa::plan_resolution_test {

using aoa::test::forEachPoint;
using aoa::test::Point;

/// Independent geometry helpers (no library code).
int64_t volumeOf(llvm::ArrayRef<int64_t> shape);
/// Row-major index of global point `p` inside `box` (-1 when outside).
int64_t indexIn(const Box &box, const Point &p);
/// Global point at row-major index `index` of `box`.
Point pointAt(const Box &box, int64_t index);
Box wholeBox(const std::vector<int64_t> &shape);
std::string str(const std::vector<int64_t> &v);

struct ShardSpec {
  uint32_t rank = 0;
  std::string file;
  std::string name;
  Box box;
  std::optional<FlatElementRange> flat;
};

struct KeySpec {
  std::string key;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<ShardSpec> shards;
};

/// Where destination element (key, point) comes from: source key and point.
using Model = std::function<std::pair<std::string, Point>(
    const std::string &dstKey, const Point &p)>;

struct Case {
  std::string kind;
  std::vector<KeySpec> source;
  std::vector<KeySpec> destination;
  std::string config; ///< .aoa text; empty: no statements (identity)
  int64_t budget = int64_t(1) << 30;
  /// Compiled with --shared-src: the writing rank reads every piece.
  bool sharedSource = false;
  /// --threads.
  unsigned threads = 1;
  /// Per destination key (keys not listed are identity loads).
  std::map<std::string, Model> model;

  std::pair<std::string, Point> predict(const std::string &key,
                                        const Point &p) const {
    auto it = model.find(key);
    if (it == model.end())
      return {key, p};
    return it->second(key, p);
  }

  std::string describe() const {
    std::ostringstream os;
    os << "case kind=" << kind << " budget=" << budget
       << (sharedSource ? " shared-src" : "") << "\nconfig:\n"
       << (config.empty() ? "(no statements)\n" : config) << "\n";
    auto side = [&](const char *name, const std::vector<KeySpec> &keys) {
      os << name << ":\n";
      for (const KeySpec &k : keys) {
        os << "  " << k.key << " " << dtypeName(k.dtype) << " " << str(k.shape)
           << "\n";
        for (const ShardSpec &s : k.shards) {
          os << "    rank " << s.rank << " " << s.file << ":" << s.name << " "
             << s.box.toString();
          if (s.flat)
            os << " flat [" << s.flat->begin << ", " << s.flat->end << ")";
          os << "\n";
        }
      }
    };
    side("source", source);
    side("destination", destination);
    return os.str();
  }
};

class Rng {
public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  /// Uniform in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(engine_() % uint64_t(hi - lo + 1));
  }
  bool chance(double p) {
    return static_cast<double>(engine_() % 1000000) < p * 1000000.0;
  }
  template <typename T> void shuffle(std::vector<T> &v) {
    for (size_t i = v.size(); i > 1; --i)
      std::swap(v[i - 1], v[static_cast<size_t>(range(0, int64_t(i) - 1))]);
  }
  /// `count` distinct values of [lo, hi], sorted.
  std::vector<int64_t> distinct(int64_t lo, int64_t hi, size_t count) {
    std::vector<int64_t> all;
    for (int64_t x = lo; x <= hi; ++x)
      all.push_back(x);
    shuffle(all);
    all.resize(std::min(count, all.size()));
    std::sort(all.begin(), all.end());
    return all;
  }

private:
  std::mt19937_64 engine_;
};

constexpr int kMaxRank = 5; // ranks 0..5

enum class Kind {
  Identity,
  Rename,
  Transpose,
  Permute,
  Concat,
  Split,
  Cast,
  PermuteCast,
  Reshape,
  Mixed
};

struct Compiled {
  bool ok = false;
  std::vector<std::string> errors; ///< rendered error diagnostics
  plan::Plan plan;
};

struct Stats {
  size_t cases = 0, rounds = 0, reads = 0, messages = 0, copies = 0, writes = 0,
         elements = 0, flatSource = 0, flatDestination = 0,
         replicatedSource = 0, multiRound = 0, overBudgetSingles = 0,
         elementsReadAgain = 0, localReplicaChoices = 0;
};

/// Random layouts: uneven grids of 1..4 parts per axis, 1..3 flat ranges.
std::vector<Interval> randomCuts(Rng &rng, int64_t extent);
std::vector<Box> randomGrid(Rng &rng, const std::vector<int64_t> &shape);
std::vector<FlatElementRange> randomRanges(Rng &rng, int64_t volume);
/// The file of `rank` on `side` ("src" or "dst").
std::string fileOf(const char *side, uint32_t rank);
/// Units (a box, or one flat range of it) tile the key; each unit has 1..3
/// replicas on distinct ranks.
void randomSourceLayout(Rng &rng, KeySpec &k, bool replicas = true,
                        bool flat = true);
/// Every box of a grid on 1..3 replicas, each whole or in 1..3 flat ranges.
void randomDestinationLayout(Rng &rng, KeySpec &k);
std::vector<int64_t> randomShape(Rng &rng, size_t rank, int64_t maxExtent = 7);
DType randomFloat(Rng &rng);
KeySpec sourceKey(Rng &rng, std::string key, DType dtype,
                  std::vector<int64_t> shape);
KeySpec destinationKey(Rng &rng, std::string key, DType dtype,
                       std::vector<int64_t> shape);
/// Permutation text in one of the accepted spellings.
std::string spellPermutation(Rng &rng, const std::vector<int> &perm);
/// b[q] = a[c] with c[perm[i]] = q[i].
Model permuteModel(std::string source, std::vector<int> perm);
std::vector<int64_t> permuted(const std::vector<int64_t> &shape,
                              const std::vector<int> &perm);
/// Keys no statement touches: identity loads.
void addIdentityKeys(Rng &rng, Case &c, int count);
const char *kindName(Kind k);
/// One of the kinds above except Mixed.
Kind randomKind(Rng &rng);
/// A random case of `kind`: layouts, statements and their model.
Case randomCase(Rng &rng, Kind kind);
Case mixedCase(Rng &rng);
std::string prefixNames(const std::string &text, const std::string &prefix);

/// Hand-built layouts.
ShardSpec shard(uint32_t rank, const char *side, std::string name, Box box,
                std::optional<FlatElementRange> flat = std::nullopt);
KeySpec key(std::string name, std::vector<int64_t> shape,
            std::vector<ShardSpec> shards, DType dtype = DType::F32);
/// 2500 keys of [4, 6] (three chunks of answers ahead, 1024 keys a chunk),
/// each split in rows over two source ranks and in columns over two
/// destination ranks; the keys numbered in `overlapping` have a third source
/// shard over rows 1 and 2 that is no replica of the others.
Case rowsToColumns(const std::set<int> &overlapping = {});

/// Compiles `c` in-process through the whole plan pipeline.
ShardMetadata buildMetadata(const std::vector<KeySpec> &keys);
Compiled compile(const Case &c);
/// Executes `plan` element by element on labels and checks it against the
/// model (the list above); returns every failure, empty when all is well.
std::vector<std::string> executePlan(const Case &c, const plan::Plan &plan,
                                     Stats &stats);
std::string joined(const std::vector<std::string> &lines);
/// executePlan with stats thrown away.
std::vector<std::string> execute(const Case &c, const plan::Plan &plan);
/// Every field of every rank's program, in order, as text.
std::string programText(const plan::Plan &plan);
/// True when some error diagnostic contains `needle`.
bool hasError(const Compiled &compiled, const std::string &needle);
/// The bytes each rank of `plan` reads.
std::vector<int64_t> bytesReadPerRank(const plan::Plan &plan);
/// The stored unit of a source shard: its box and flat range ([0, volume)
/// and no range are the same).
std::pair<Box, std::pair<int64_t, int64_t>> unitOf(const ShardSpec &s);
/// `c` must fail to compile with an error containing `needle` (case `i`).
void expectError(const Case &c, const std::string &needle, int i);
/// Compiles and executes `c`, then runs `planChecks` (if any) on the plan;
/// returns failures (empty when all is well).
std::vector<std::string> compileAndRun(
    const Case &c, Stats &stats,
    const std::function<std::vector<std::string>(const plan::Plan &)>
        &planChecks = {});
/// `count` random cases of `kind` from `seed`, each compiled and executed.
void runRandom(Kind kind, uint64_t seed, int count);

} // namespace aoa::plan_resolution_test

#endif // AOA_TEST_UNIT_PASSES_PLANRESOLUTIONMODEL_H
