//===- PlanResolutionTest.cpp - Compiled plans against a brute-force model
//-===//
//
// Randomized (fixed seeds): random source and destination layouts (1-D..3-D
// keys, uneven grids of 1..4 parts per axis, replicas, flat ranges that
// start and end mid-row, ranks 0..5 with one file per rank and side) and
// random statements (identity, rename, `^T`, permute, concat, split, cast,
// permute+cast, reshape, and several of them in one config). The whole plan
// pipeline runs in-process; the test then EXECUTES the plan element by
// element on labels (source key, global coordinates), sharing no code with
// runtime/, and checks:
//  - every stored destination element is written exactly once, with the
//    label the brute-force model of the statements predicts;
//  - plan tensors are the metadata's shards, unchanged, and every
//    destination shard is in the plan once;
//  - every send has its receive (same round, peer and order), buffers match
//    in shape and dtype, every buffer is filled once before it is used, and
//    copies give the shape and dtype of their output buffer;
//  - a rank reads only source files of its own rank and writes only
//    destination files of its own rank;
//  - per rank and round the buffers fit the memory budget unless they all
//    serve one indivisible transfer (one read) that is larger by itself;
//  - no data crosses ranks when the writing rank stores that source element
//    (replicas on the destination's own rank are preferred);
//  - no (rank, source tensor, region) is read twice;
//  - no copy casts more than once (no statement here does).
// Error cases: holes in the source, overlapping non-replica source shards,
// one file on two ranks. The checker is itself tested on corrupted plans.
//
//===----------------------------------------------------------------------===//
#include "BruteForce.h"

#include "aoa/frontend/ConfigLoader.h"
#include "aoa/frontend/Parser.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/Plan.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/ir/SourceManager.h"
#include "aoa/passes/CompilationState.h"
#include "aoa/passes/KeySpace.h"
#include "aoa/passes/Pass.h"
#include "aoa/passes/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace aoa;
using aoa::test::forEachPoint;
using aoa::test::Point;

namespace {

//===----------------------------------------------------------------------===//
// Independent geometry helpers (no library code)
//===----------------------------------------------------------------------===//

int64_t volumeOf(const std::vector<int64_t> &shape) {
  int64_t v = 1;
  for (int64_t e : shape)
    v *= e;
  return v;
}

/// Row-major index of global point `p` inside `box` (-1 when outside).
int64_t indexIn(const Box &box, const Point &p) {
  if (p.size() != box.rank())
    return -1;
  int64_t index = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const Interval &d = box.dim(i);
    if (p[i] < d.begin || p[i] >= d.end)
      return -1;
    index = index * (d.end - d.begin) + (p[i] - d.begin);
  }
  return index;
}

/// Global point at row-major index `index` of `box`.
Point pointAt(const Box &box, int64_t index) {
  Point p(box.rank());
  for (size_t i = box.rank(); i-- > 0;) {
    int64_t size = box.dim(i).end - box.dim(i).begin;
    p[i] = box.dim(i).begin + index % size;
    index /= size;
  }
  return p;
}

Box wholeBox(const std::vector<int64_t> &shape) {
  return Box(std::vector<int64_t>(shape.size(), 0), shape);
}

std::string str(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

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
    os << "case kind=" << kind << " budget=" << budget << "\nconfig:\n"
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

/// Cuts [0, extent) into 1..4 intervals (not necessarily even).
std::vector<Interval> randomCuts(Rng &rng, int64_t extent) {
  int64_t parts = rng.range(1, std::min<int64_t>(4, extent));
  std::vector<int64_t> cuts = rng.distinct(1, extent - 1, size_t(parts - 1));
  std::vector<Interval> out;
  int64_t begin = 0;
  for (int64_t c : cuts) {
    out.push_back({begin, c});
    begin = c;
  }
  out.push_back({begin, extent});
  return out;
}

std::vector<Box> randomGrid(Rng &rng, const std::vector<int64_t> &shape) {
  std::vector<std::vector<Interval>> axes;
  for (int64_t extent : shape)
    axes.push_back(randomCuts(rng, extent));
  std::vector<Box> boxes;
  std::vector<size_t> at(shape.size(), 0);
  while (true) {
    llvm::SmallVector<Interval, 4> dims;
    for (size_t i = 0; i < shape.size(); ++i)
      dims.push_back(axes[i][at[i]]);
    boxes.push_back(Box(dims));
    size_t i = shape.size();
    while (i > 0) {
      --i;
      if (++at[i] < axes[i].size())
        break;
      at[i] = 0;
      if (i == 0)
        return boxes;
    }
    if (shape.empty())
      return boxes;
  }
}

/// 1..3 contiguous non-empty ranges covering [0, volume).
std::vector<FlatElementRange> randomRanges(Rng &rng, int64_t volume) {
  int64_t parts = rng.range(1, std::min<int64_t>(3, volume));
  std::vector<int64_t> cuts = rng.distinct(1, volume - 1, size_t(parts - 1));
  std::vector<FlatElementRange> out;
  int64_t begin = 0;
  for (int64_t c : cuts) {
    out.push_back({begin, c});
    begin = c;
  }
  out.push_back({begin, volume});
  return out;
}

std::string fileOf(const char *side, uint32_t rank) {
  return std::string(side) + "_r" + std::to_string(rank) + ".safetensors";
}

/// A source layout: units (a box, or one flat range of it) tile the key;
/// each unit has 1..3 replicas on distinct ranks.
void randomSourceLayout(Rng &rng, KeySpec &k, bool replicas = true,
                        bool flat = true) {
  int counter = 0;
  for (const Box &box : randomGrid(rng, k.shape)) {
    std::vector<std::optional<FlatElementRange>> units;
    if (flat && rng.chance(0.4))
      for (const FlatElementRange &r : randomRanges(rng, box.volume()))
        units.push_back(r);
    else
      units.push_back(std::nullopt);
    for (const std::optional<FlatElementRange> &unit : units) {
      size_t copies =
          replicas && rng.chance(0.35) ? size_t(rng.range(2, 3)) : 1;
      for (int64_t rank : rng.distinct(0, kMaxRank, copies)) {
        ShardSpec s;
        s.rank = uint32_t(rank);
        s.file = fileOf("src", s.rank);
        s.name = k.key + "@" + std::to_string(counter++);
        s.box = box;
        s.flat = unit;
        // A range of the whole box is the same as no range.
        if (s.flat && s.flat->begin == 0 && s.flat->end == box.volume() &&
            rng.chance(0.5))
          s.flat.reset();
        else if (!s.flat && rng.chance(0.15))
          s.flat = FlatElementRange{0, box.volume()};
        k.shards.push_back(s);
      }
    }
  }
  rng.shuffle(k.shards);
}

/// A destination layout: every box of a grid on 1..3 replicas (distinct
/// ranks); each replica whole, or split into 1..3 flat ranges stored on
/// random ranks (replicas may split differently).
void randomDestinationLayout(Rng &rng, KeySpec &k) {
  int counter = 0;
  for (const Box &box : randomGrid(rng, k.shape)) {
    size_t copies = rng.chance(0.3) ? size_t(rng.range(2, 3)) : 1;
    for (int64_t rank : rng.distinct(0, kMaxRank, copies)) {
      if (rng.chance(0.35)) {
        for (const FlatElementRange &r : randomRanges(rng, box.volume())) {
          ShardSpec s;
          s.rank = rng.chance(0.5) ? uint32_t(rank)
                                   : uint32_t(rng.range(0, kMaxRank));
          s.file = fileOf("dst", s.rank);
          s.name = k.key + "@" + std::to_string(counter++);
          s.box = box;
          s.flat = r;
          k.shards.push_back(s);
        }
      } else {
        ShardSpec s;
        s.rank = uint32_t(rank);
        s.file = fileOf("dst", s.rank);
        s.name = k.key + "@" + std::to_string(counter++);
        s.box = box;
        k.shards.push_back(s);
      }
    }
  }
  rng.shuffle(k.shards);
}

std::vector<int64_t> randomShape(Rng &rng, size_t rank, int64_t maxExtent = 7) {
  std::vector<int64_t> shape;
  for (size_t i = 0; i < rank; ++i)
    shape.push_back(rng.range(1, maxExtent));
  return shape;
}

DType randomFloat(Rng &rng) {
  static const DType kTypes[] = {DType::F32, DType::F32, DType::F16,
                                 DType::BF16, DType::F64};
  return kTypes[rng.range(0, 4)];
}

KeySpec sourceKey(Rng &rng, std::string key, DType dtype,
                  std::vector<int64_t> shape) {
  KeySpec k;
  k.key = std::move(key);
  k.dtype = dtype;
  k.shape = std::move(shape);
  randomSourceLayout(rng, k);
  return k;
}

KeySpec destinationKey(Rng &rng, std::string key, DType dtype,
                       std::vector<int64_t> shape) {
  KeySpec k;
  k.key = std::move(key);
  k.dtype = dtype;
  k.shape = std::move(shape);
  randomDestinationLayout(rng, k);
  return k;
}

/// Permutation text in one of the accepted spellings.
std::string spellPermutation(Rng &rng, const std::vector<int> &perm) {
  bool reversal = true;
  for (size_t i = 0; i < perm.size(); ++i)
    reversal &= perm[i] == int(perm.size() - 1 - i);
  if (reversal && rng.chance(0.3))
    return "[]";
  std::string s = "[";
  for (size_t i = 0; i < perm.size(); ++i) {
    int axis = perm[i];
    if (rng.chance(0.2))
      axis -= int(perm.size()); // negative spelling
    s += (i ? ", " : "") + std::to_string(axis);
  }
  return s + "]";
}

/// b[q] = a[c] with c[perm[i]] = q[i].
Model permuteModel(std::string source, std::vector<int> perm) {
  return [source, perm](const std::string &, const Point &q) {
    Point c(q.size());
    for (size_t i = 0; i < q.size(); ++i)
      c[size_t(perm[i])] = q[i];
    return std::make_pair(source, c);
  };
}

std::vector<int64_t> permuted(const std::vector<int64_t> &shape,
                              const std::vector<int> &perm) {
  std::vector<int64_t> out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    out[i] = shape[size_t(perm[i])];
  return out;
}

/// Keys no statement touches: identity loads.
void addIdentityKeys(Rng &rng, Case &c, int count) {
  for (int i = 0; i < count; ++i) {
    std::string key = "id" + std::to_string(i);
    static const DType kOthers[] = {DType::I64, DType::I32, DType::I16,
                                    DType::I8,  DType::U8,  DType::Bool};
    DType dtype = rng.chance(0.2) ? kOthers[rng.range(0, 5)] : randomFloat(rng);
    std::vector<int64_t> shape = randomShape(rng, size_t(rng.range(1, 3)));
    c.source.push_back(sourceKey(rng, key, dtype, shape));
    c.destination.push_back(destinationKey(rng, key, dtype, shape));
  }
}

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
const char *kindName(Kind k) {
  switch (k) {
  case Kind::Identity:
    return "identity";
  case Kind::Rename:
    return "rename";
  case Kind::Transpose:
    return "transpose";
  case Kind::Permute:
    return "permute";
  case Kind::Concat:
    return "concat";
  case Kind::Split:
    return "split";
  case Kind::Cast:
    return "cast";
  case Kind::PermuteCast:
    return "permute+cast";
  case Kind::Reshape:
    return "reshape";
  case Kind::Mixed:
    return "mixed";
  }
  return "?";
}

Case mixedCase(Rng &rng);

Case randomCase(Rng &rng, Kind kind) {
  if (kind == Kind::Mixed)
    return mixedCase(rng);
  Case c;
  c.kind = kindName(kind);
  static const int64_t kBudgets[] = {16,  48,   64,   100,
                                     256, 1000, 4096, int64_t(1) << 30};
  c.budget = kBudgets[rng.range(0, 7)];
  size_t rank = size_t(rng.range(1, 3));
  DType dtype = randomFloat(rng);
  std::ostringstream config;
  switch (kind) {
  case Kind::Mixed: // mixedCase
  case Kind::Identity:
    addIdentityKeys(rng, c, int(rng.range(1, 3)));
    return c;
  case Kind::Rename: {
    std::vector<int64_t> shape = randomShape(rng, rank);
    c.source.push_back(sourceKey(rng, "a", dtype, shape));
    c.destination.push_back(destinationKey(rng, "b", dtype, shape));
    config << "a -> b\n";
    c.model["b"] = [](const std::string &, const Point &p) {
      return std::make_pair(std::string("a"), p);
    };
    break;
  }
  case Kind::Transpose:
  case Kind::Permute:
  case Kind::PermuteCast: {
    std::vector<int64_t> shape = randomShape(rng, rank);
    std::vector<int> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    if (kind == Kind::Transpose)
      std::reverse(perm.begin(), perm.end());
    else
      rng.shuffle(perm);
    DType target = kind == Kind::PermuteCast ? DType::F16 : dtype;
    if (kind == Kind::PermuteCast && dtype == DType::F16)
      dtype = DType::F32;
    c.source.push_back(sourceKey(rng, "a", dtype, shape));
    c.destination.push_back(
        destinationKey(rng, "b", target, permuted(shape, perm)));
    if (kind == Kind::Transpose)
      config << "a^T -> b\n";
    else if (kind == Kind::Permute)
      config << "a -> b, permute='" << spellPermutation(rng, perm) << "'\n";
    else if (rng.chance(0.5))
      config << "a -> b, permute='" << spellPermutation(rng, perm)
             << "', dtype='float16'\n";
    else
      config << "a -> b, dtype='float16', permute='"
             << spellPermutation(rng, perm) << "'\n";
    c.model["b"] = permuteModel("a", perm);
    break;
  }
  case Kind::Concat: {
    size_t parts = size_t(rng.range(2, 3));
    size_t axis = size_t(rng.range(0, int64_t(rank) - 1));
    std::vector<int64_t> shape = randomShape(rng, rank, 5);
    std::vector<int64_t> total = shape;
    total[axis] = 0;
    std::vector<std::pair<int64_t, std::string>> offsets;
    std::string names;
    for (size_t j = 0; j < parts; ++j) {
      std::vector<int64_t> partShape = shape;
      partShape[axis] = rng.range(1, 4);
      std::string name = "a" + std::to_string(j);
      c.source.push_back(sourceKey(rng, name, dtype, partShape));
      offsets.push_back({total[axis], name});
      total[axis] += partShape[axis];
      names += (j ? ", " : "") + name;
    }
    c.destination.push_back(destinationKey(rng, "c", dtype, total));
    int64_t spelledAxis =
        rng.chance(0.3) ? int64_t(axis) - int64_t(rank) : int64_t(axis);
    config << names << " -> c, axis=" << spelledAxis << "\n";
    c.model["c"] = [offsets, axis](const std::string &, const Point &p) {
      size_t j = offsets.size() - 1;
      while (offsets[j].first > p[axis])
        --j;
      Point q = p;
      q[axis] -= offsets[j].first;
      return std::make_pair(offsets[j].second, q);
    };
    break;
  }
  case Kind::Split: {
    size_t parts = size_t(rng.range(2, 3));
    size_t axis = size_t(rng.range(0, int64_t(rank) - 1));
    std::vector<int64_t> shape = randomShape(rng, rank, 5);
    int64_t part = rng.range(1, 3);
    shape[axis] = part * int64_t(parts);
    c.source.push_back(sourceKey(rng, "a", dtype, shape));
    std::string names;
    std::vector<int64_t> partShape = shape;
    partShape[axis] = part;
    for (size_t j = 0; j < parts; ++j) {
      std::string name = "b" + std::to_string(j);
      c.destination.push_back(destinationKey(rng, name, dtype, partShape));
      names += (j ? ", " : "") + name;
      int64_t offset = part * int64_t(j);
      c.model[name] = [offset, axis](const std::string &, const Point &p) {
        Point q = p;
        q[axis] += offset;
        return std::make_pair(std::string("a"), q);
      };
    }
    config << "a -> " << names << ", axis=" << axis << "\n";
    break;
  }
  case Kind::Reshape: {
    // (c0*c1, prod r) <-> (c0, c1, r...): only whole blocks of c1 rows can
    // be mapped, so the source is one unit (replicated) and destination
    // shards cut only the leading axis, at block boundaries.
    std::vector<int64_t> canonical = {rng.range(1, 4), rng.range(1, 3)};
    for (int64_t i = rng.range(1, 2); i > 0; --i)
      canonical.push_back(rng.range(1, 3));
    int64_t trailing = 1;
    for (size_t i = 2; i < canonical.size(); ++i)
      trailing *= canonical[i];
    std::vector<int64_t> flattened = {canonical[0] * canonical[1], trailing};
    bool flatten = rng.chance(0.5);
    std::vector<int64_t> from = flatten ? canonical : flattened;
    std::vector<int64_t> to = flatten ? flattened : canonical;
    KeySpec a;
    a.key = "a";
    a.dtype = dtype;
    a.shape = from;
    int counter = 0;
    for (int64_t r : rng.distinct(0, kMaxRank, size_t(rng.range(1, 3)))) {
      ShardSpec sh;
      sh.rank = uint32_t(r);
      sh.file = fileOf("src", sh.rank);
      sh.name = "a@" + std::to_string(counter++);
      sh.box = wholeBox(from);
      a.shards.push_back(sh);
    }
    c.source.push_back(a);
    KeySpec b;
    b.key = "b";
    b.dtype = dtype;
    b.shape = to;
    // Blocks along the leading axis: c0 blocks of c1 rows when flattened.
    int64_t unit = flatten ? canonical[1] : 1;
    for (const Interval &blocks : randomCuts(rng, canonical[0]))
      for (int64_t r : rng.distinct(0, kMaxRank, rng.chance(0.3) ? 2 : 1)) {
        ShardSpec sh;
        sh.rank = uint32_t(r);
        sh.file = fileOf("dst", sh.rank);
        sh.name = "b@" + std::to_string(counter++);
        std::vector<int64_t> offset(to.size(), 0), shape = to;
        offset[0] = blocks.begin * unit;
        shape[0] = (blocks.end - blocks.begin) * unit;
        sh.box = Box(offset, shape);
        b.shards.push_back(sh);
      }
    rng.shuffle(b.shards);
    c.destination.push_back(b);
    config << "a -> b, reshape='" << str(canonical) << "'\n";
    Box fromBox = wholeBox(from), toBox = wholeBox(to);
    c.model["b"] = [fromBox, toBox](const std::string &, const Point &q) {
      return std::make_pair(std::string("a"),
                            pointAt(fromBox, indexIn(toBox, q)));
    };
    break;
  }
  case Kind::Cast: {
    if (dtype == DType::F16)
      dtype = DType::F32;
    std::vector<int64_t> shape = randomShape(rng, rank);
    bool inPlace = rng.chance(0.5);
    std::string target = inPlace ? "a" : "b";
    c.source.push_back(sourceKey(rng, "a", dtype, shape));
    c.destination.push_back(destinationKey(rng, target, DType::F16, shape));
    config << "a -> " << target << ", dtype='float16'\n";
    c.model[target] = [](const std::string &, const Point &p) {
      return std::make_pair(std::string("a"), p);
    };
    break;
  }
  }
  addIdentityKeys(rng, c, int(rng.range(0, 2)));
  c.config = config.str();
  return c;
}

/// `prefix` before every name of a .aoa text (not attribute keys, quoted
/// values or the T of ^T).
std::string prefixNames(const std::string &text, const std::string &prefix) {
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < text.size();) {
    char ch = text[i];
    if (ch == '\'') {
      quoted = !quoted;
      out += text[i++];
      continue;
    }
    if (quoted ||
        !(std::isalpha(static_cast<unsigned char>(ch)) || ch == '_')) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) ||
            text[end] == '_'))
      ++end;
    size_t next = end;
    while (next < text.size() && text[next] == ' ')
      ++next;
    bool attribute = next < text.size() && text[next] == '=';
    bool suffix = i > 0 && text[i - 1] == '^';
    if (!attribute && !suffix)
      out += prefix;
    out += text.substr(i, end - i);
    i = end;
  }
  return out;
}

/// Several statement kinds in one config, each on its own keys (prefixed
/// m0_, m1_, ...); files are shared between them.
Case mixedCase(Rng &rng) {
  static const Kind kKinds[] = {
      Kind::Rename, Kind::Transpose, Kind::Permute,     Kind::Concat,
      Kind::Split,  Kind::Cast,      Kind::PermuteCast, Kind::Reshape};
  Case out;
  out.kind = "mixed";
  int parts = int(rng.range(2, 3));
  for (int j = 0; j < parts; ++j) {
    int64_t pick = rng.range(0, 7);
    Case sub = randomCase(rng, kKinds[pick]);
    std::string prefix = "m" + std::to_string(j) + "_";
    out.kind += " " + sub.kind;
    out.budget = sub.budget;
    for (auto *side : {&sub.source, &sub.destination})
      for (KeySpec &k : *side) {
        k.key = prefix + k.key;
        for (ShardSpec &sh : k.shards)
          sh.name = prefix + sh.name;
      }
    out.source.insert(out.source.end(), sub.source.begin(), sub.source.end());
    out.destination.insert(out.destination.end(), sub.destination.begin(),
                           sub.destination.end());
    out.config += prefixNames(sub.config, prefix);
    for (const auto &[key, model] : sub.model) {
      Model inner = model;
      out.model[prefix + key] = [inner, prefix](const std::string &k,
                                                const Point &p) {
        auto [source, q] = inner(k.substr(prefix.size()), p);
        return std::make_pair(prefix + source, q);
      };
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

ShardMetadata buildMetadata(const std::vector<KeySpec> &keys) {
  ShardMetadataBuilder builder;
  for (const KeySpec &k : keys) {
    EXPECT_TRUE(builder.addTensor(k.key, k.dtype, k.shape).has_value());
    for (const ShardSpec &s : k.shards)
      EXPECT_TRUE(builder
                      .addShard(s.rank, s.file, s.name, s.box.offsets(),
                                s.box.shape(), s.flat)
                      .has_value());
  }
  return builder.finish();
}

struct Compiled {
  bool ok = false;
  std::vector<std::string> errors; ///< rendered error diagnostics
  plan::Plan plan;
};

Compiled compile(const Case &c) {
  Compiled out;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  diags.setHandler([&](const Diagnostic &d) {
    if (d.severity == Severity::Error)
      out.errors.push_back(renderDiagnostic(d, sources));
  });
  ShardMetadata source = buildMetadata(c.source);
  ShardMetadata destination = buildMetadata(c.destination);
  CompilationState state(sources, diags);
  if (!c.config.empty()) {
    std::optional<ConfigFile> config =
        loadConfigText("case.aoa", c.config, sources, diags);
    if (!config)
      return out;
    std::optional<Program> program = parseConfig(*config, sources, diags);
    if (!program)
      return out;
    state.program = std::move(*program);
  }
  state.source = KeySpace(source, "source", "src.json");
  state.destination = KeySpace(destination, "destination", "dst.json");
  state.memoryBudget = c.budget;
  PassManager pm;
  addPipeline(pm, PipelineStage::Plan);
  std::ostringstream sink;
  bool ran = pm.run(state, PassInstrumentation{}, sink, sink);
  out.ok = ran && !diags.hadErrors();
  out.plan = std::move(state.plan);
  return out;
}

//===----------------------------------------------------------------------===//
// Executing a plan on labels
//===----------------------------------------------------------------------===//

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

struct Stats {
  size_t cases = 0, rounds = 0, reads = 0, messages = 0, copies = 0, writes = 0,
         elements = 0, flatSource = 0, flatDestination = 0,
         replicatedSource = 0, multiRound = 0, overBudgetSingles = 0,
         elementsReadAgain = 0, localReplicaChoices = 0;
};

class Executor {
public:
  Executor(const Case &c, const plan::Plan &plan, Stats &stats)
      : c_(c), plan_(plan), stats_(stats) {}

  std::vector<std::string> run() {
    indexSources();
    matchTensors();
    if (!errors_.empty())
      return errors_;
    if (plan_.programs.size() != plan_.ranks)
      fail("plan has " + std::to_string(plan_.programs.size()) +
           " programs for " + std::to_string(plan_.ranks) + " ranks");
    size_t rounds =
        plan_.programs.empty() ? 0 : plan_.programs[0].rounds.size();
    for (const plan::RankProgram &p : plan_.programs)
      if (p.rounds.size() != rounds)
        fail("ranks have different round counts");
    if (!errors_.empty())
      return errors_;
    stats_.rounds += rounds;
    if (rounds > 1)
      ++stats_.multiRound;
    for (size_t r = 0; r < rounds && errors_.size() < 20; ++r)
      runRound(r);
    checkDestinations();
    return errors_;
  }

private:
  void fail(std::string message) {
    if (errors_.size() < 20)
      errors_.push_back(std::move(message));
  }

  int32_t keyId(const std::string &key) const {
    auto it = keyIds_.find(key);
    return it == keyIds_.end() ? -1 : it->second;
  }

  void indexSources() {
    for (const KeySpec &k : c_.source) {
      int32_t id = int32_t(keyIds_.size());
      keyIds_[k.key] = id;
      keyShapes_.push_back(k.shape);
      std::vector<uint8_t> mask(size_t(volumeOf(k.shape)), 0);
      for (const ShardSpec &s : k.shards) {
        int64_t begin = s.flat ? s.flat->begin : 0;
        int64_t end = s.flat ? s.flat->end : s.box.volume();
        for (int64_t i = begin; i < end; ++i)
          mask[size_t(indexIn(wholeBox(k.shape), pointAt(s.box, i)))] |=
              uint8_t(1u << s.rank);
        if (s.flat)
          ++stats_.flatSource;
      }
      storedOnRank_.push_back(std::move(mask));
      std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> boxes;
      for (const ShardSpec &s : k.shards)
        if (!boxes.insert({s.box.offsets(), s.box.shape()}).second) {
          ++stats_.replicatedSource;
          break;
        }
    }
  }

  /// Every plan tensor is one of the generated shards, unchanged; every
  /// destination shard is in the plan exactly once.
  void matchTensors() {
    auto match = [&](const char *side, const std::vector<KeySpec> &keys,
                     const std::vector<plan::File> &files,
                     const std::vector<plan::StoredTensor> &tensors,
                     std::vector<const ShardSpec *> &specs) {
      std::map<std::pair<std::string, std::string>,
               std::pair<const KeySpec *, const ShardSpec *>>
          byName;
      for (const KeySpec &k : keys)
        for (const ShardSpec &s : k.shards)
          byName[{s.file, s.name}] = {&k, &s};
      for (size_t i = 0; i < tensors.size(); ++i) {
        const plan::StoredTensor &t = tensors[i];
        std::string where = std::string(side) + " tensor " + std::to_string(i);
        if (t.file >= files.size()) {
          fail(where + ": bad file index");
          specs.push_back(nullptr);
          continue;
        }
        const plan::File &file = files[t.file];
        auto it = byName.find({file.path, t.name});
        if (it == byName.end()) {
          fail(where + ": no shard " + file.path + ":" + t.name);
          specs.push_back(nullptr);
          continue;
        }
        const KeySpec &k = *it->second.first;
        const ShardSpec &s = *it->second.second;
        if (t.key != k.key || t.dtype != k.dtype || t.globalShape != k.shape ||
            t.box != s.box || t.flat != s.flat)
          fail(where + " (" + t.name +
               "): key, dtype, shape, box or flat "
               "range differ from the metadata");
        if (file.rank != s.rank)
          fail(where + " (" + t.name + "): file '" + file.path + "' on rank " +
               std::to_string(file.rank) + ", shard on rank " +
               std::to_string(s.rank));
        specs.push_back(&s);
      }
    };
    match("source", c_.source, plan_.sourceFiles, plan_.sourceTensors,
          sourceSpecs_);
    match("destination", c_.destination, plan_.destinationFiles,
          plan_.destinationTensors, destinationSpecs_);
    std::map<const ShardSpec *, int> seen;
    for (const ShardSpec *s : destinationSpecs_)
      if (s && ++seen[s] > 1)
        fail("destination shard " + s->name + " is in the plan twice");
    for (const KeySpec &k : c_.destination)
      for (const ShardSpec &s : k.shards) {
        if (!seen.count(&s))
          fail("destination shard " + s.file + ":" + s.name +
               " is not in the plan");
        if (s.flat)
          ++stats_.flatDestination;
      }
    for (const plan::StoredTensor &t : plan_.destinationTensors)
      written_.push_back(std::vector<std::pair<int, Label>>(
          size_t(t.storedElements()), {0, Label{}}));
  }

  /// Position of global point p in the stored data of t (-1 if not stored).
  static int64_t storedIndex(const plan::StoredTensor &t, const Point &p) {
    int64_t i = indexIn(t.box, p);
    if (i < 0)
      return -1;
    if (t.flat) {
      if (i < t.flat->begin || i >= t.flat->end)
        return -1;
      i -= t.flat->begin;
    }
    return i;
  }

  static int phaseOf(plan::Opcode op) {
    switch (op) {
    case plan::Opcode::Read:
      return 0;
    case plan::Opcode::Send:
    case plan::Opcode::Recv:
      return 1;
    case plan::Opcode::Copy:
      return 2;
    case plan::Opcode::Write:
      return 3;
    }
    return 4;
  }

  void runRound(size_t r) {
    std::string at = "round " + std::to_string(r);
    std::vector<std::vector<Buffer>> buffers(plan_.ranks);
    size_t readsInRound = 0;
    std::set<std::tuple<uint32_t, uint32_t, std::vector<int64_t>,
                        std::vector<int64_t>>>
        readsSeen;
    // Declarations and instruction order.
    for (uint32_t rank = 0; rank < plan_.ranks; ++rank) {
      const plan::Round &round = plan_.programs[rank].rounds[r];
      for (const plan::BufferDecl &d : round.buffers) {
        Buffer b;
        b.dtype = d.dtype;
        b.shape = d.shape;
        buffers[rank].push_back(b);
      }
      int phase = 0;
      for (const plan::Instruction &in : round.instructions) {
        int p = phaseOf(in.opcode);
        if (p < phase)
          fail(at + " rank " + std::to_string(rank) +
               ": instructions out of phase order");
        phase = std::max(phase, p);
        if (in.opcode == plan::Opcode::Read)
          ++readsInRound;
      }
    }
    stats_.reads += readsInRound;
    auto buffer = [&](uint32_t rank, uint32_t id) -> Buffer * {
      if (id >= buffers[rank].size()) {
        fail(at + " rank " + std::to_string(rank) + ": buffer " +
             std::to_string(id) + " not declared");
        return nullptr;
      }
      return &buffers[rank][id];
    };

    // Reads.
    for (uint32_t rank = 0; rank < plan_.ranks; ++rank)
      for (size_t n = 0; n < plan_.programs[rank].rounds[r].instructions.size();
           ++n) {
        const plan::Instruction &in =
            plan_.programs[rank].rounds[r].instructions[n];
        if (in.opcode != plan::Opcode::Read)
          continue;
        std::string where = at + " rank " + std::to_string(rank) + " read";
        if (in.tensor >= plan_.sourceTensors.size()) {
          fail(where + ": bad tensor");
          continue;
        }
        const plan::StoredTensor &t = plan_.sourceTensors[in.tensor];
        if (plan_.sourceFiles[t.file].rank != rank)
          fail(where + " of " + t.name + ": its file is on rank " +
               std::to_string(plan_.sourceFiles[t.file].rank));
        if (!readsSeen
                 .insert(
                     {rank, in.tensor, in.region.offsets(), in.region.shape()})
                 .second)
          fail(where + ": " + t.key + in.region.toString() +
               " read twice in the round");
        else if (!readsEver_
                      .insert({rank, in.tensor, in.region.offsets(),
                               in.region.shape()})
                      .second)
          fail(where + ": " + t.key + in.region.toString() +
               " read again (an earlier round read it too)");
        forEachPoint(in.region, [&](const Point &p) {
          if (!elementsRead_.insert({in.tensor, indexIn(t.box, p)}).second)
            ++stats_.elementsReadAgain;
        });
        Buffer *b = buffer(rank, in.buffer);
        if (!b)
          continue;
        if (b->defined)
          fail(where + ": buffer filled twice");
        if (b->dtype != t.dtype || b->shape != in.region.shape() ||
            in.region.rank() != t.box.rank()) {
          fail(where + ": buffer " + str(b->shape) + " " +
               std::string(dtypeName(b->dtype)) + " for region " +
               in.region.toString() + " of " + std::string(dtypeName(t.dtype)));
          continue;
        }
        int32_t key = keyId(t.key);
        b->data.clear();
        bool ok = true;
        forEachPoint(in.region, [&](const Point &p) {
          if (storedIndex(t, p) < 0) {
            ok = false;
            return;
          }
          b->data.push_back(
              Label{key, indexIn(wholeBox(keyShapes_[size_t(key)]), p)});
        });
        if (!ok) {
          fail(where + ": " + t.key + in.region.toString() +
               " is not stored in " + t.name);
          continue;
        }
        b->defined = true;
        b->originRank = int(rank);
        b->originRead = {int(rank), n};
      }

    // Sends and receives: the k-th send from s to d matches the k-th
    // receive on d from s.
    std::map<std::pair<uint32_t, uint32_t>,
             std::vector<const plan::Instruction *>>
        sends, recvs;
    for (uint32_t rank = 0; rank < plan_.ranks; ++rank)
      for (const plan::Instruction &in :
           plan_.programs[rank].rounds[r].instructions) {
        if (in.opcode != plan::Opcode::Send && in.opcode != plan::Opcode::Recv)
          continue;
        if (in.peer >= plan_.ranks || in.peer == rank) {
          fail(at + " rank " + std::to_string(rank) + ": bad peer " +
               std::to_string(in.peer));
          continue;
        }
        if (in.opcode == plan::Opcode::Send)
          sends[{rank, in.peer}].push_back(&in);
        else
          recvs[{in.peer, rank}].push_back(&in);
      }
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (const auto &s : sends)
      pairs.insert(s.first);
    for (const auto &s : recvs)
      pairs.insert(s.first);
    for (const auto &[from, to] : pairs) {
      const auto &ss = sends[{from, to}];
      const auto &rr = recvs[{from, to}];
      std::string where =
          at + " " + std::to_string(from) + "->" + std::to_string(to);
      if (ss.size() != rr.size()) {
        fail(where + ": " + std::to_string(ss.size()) + " sends, " +
             std::to_string(rr.size()) + " receives");
        continue;
      }
      for (size_t m = 0; m < ss.size(); ++m) {
        ++stats_.messages;
        if (ss[m]->buffers.size() != rr[m]->buffers.size()) {
          fail(where + ": message buffer counts differ");
          continue;
        }
        for (size_t j = 0; j < ss[m]->buffers.size(); ++j) {
          Buffer *src = buffer(from, ss[m]->buffers[j]);
          Buffer *dst = buffer(to, rr[m]->buffers[j]);
          if (!src || !dst)
            continue;
          if (!src->defined)
            fail(where + ": sends an unfilled buffer");
          if (dst->defined)
            fail(where + ": receives into a filled buffer");
          if (src->dtype != dst->dtype || src->shape != dst->shape) {
            fail(where + ": send " + str(src->shape) + " receive " +
                 str(dst->shape));
            continue;
          }
          dst->data = src->data;
          dst->originRank = src->originRank;
          dst->originRead = src->originRead;
          dst->defined = src->defined;
        }
      }
    }

    // Copies and writes, in order.
    for (uint32_t rank = 0; rank < plan_.ranks; ++rank)
      for (const plan::Instruction &in :
           plan_.programs[rank].rounds[r].instructions) {
        std::string where = at + " rank " + std::to_string(rank);
        if (in.opcode == plan::Opcode::Copy) {
          ++stats_.copies;
          Buffer *input = buffer(rank, in.input);
          Buffer *output = buffer(rank, in.buffer);
          if (!input || !output)
            continue;
          if (!input->defined || output->defined) {
            fail(where + ": copy from an unfilled or into a filled buffer");
            continue;
          }
          // No statement here casts twice: data must not be rounded
          // through an intermediate dtype.
          int casts = 0;
          for (const plan::TransformStep &step : in.transform)
            casts += step.kind == plan::TransformStep::Kind::Cast;
          if (casts > 1) {
            std::string text;
            for (const plan::TransformStep &step : in.transform)
              text += " " + step.text();
            fail(where + ": copy casts " + std::to_string(casts) +
                 " times:" + text);
          }
          Buffer result = *input;
          std::string why;
          if (!applyTransform(in.transform, result, why)) {
            fail(where + ": copy: " + why);
            continue;
          }
          if (result.dtype != output->dtype || result.shape != output->shape) {
            fail(where + ": copy gives " + str(result.shape) + " " +
                 std::string(dtypeName(result.dtype)) + ", buffer is " +
                 str(output->shape) + " " +
                 std::string(dtypeName(output->dtype)));
            continue;
          }
          output->data = std::move(result.data);
          output->originRank = input->originRank;
          output->originRead = input->originRead;
          output->defined = true;
        } else if (in.opcode == plan::Opcode::Write) {
          ++stats_.writes;
          write(rank, in, buffer(rank, in.buffer), where);
        }
      }

    // Memory: a rank's buffers of a round fit the budget, unless they all
    // serve one indivisible transfer (one read, with its messages and
    // copies) that is larger by itself.
    for (uint32_t rank = 0; rank < plan_.ranks; ++rank) {
      const plan::Round &round = plan_.programs[rank].rounds[r];
      int64_t bytes = 0;
      for (const plan::BufferDecl &d : round.buffers)
        bytes += volumeOf(d.shape) * int64_t(dtypeSize(d.dtype));
      if (bytes > plan_.memoryBudget) {
        std::set<std::pair<int, size_t>> transfers;
        for (const Buffer &b : buffers[rank])
          transfers.insert(b.originRead);
        if (transfers.size() != 1)
          fail(at + " rank " + std::to_string(rank) + ": " +
               std::to_string(bytes) + " buffer bytes over the budget " +
               std::to_string(plan_.memoryBudget) + ", for " +
               std::to_string(transfers.size()) + " transfers (" +
               std::to_string(readsInRound) + " reads in the round)");
        else
          ++stats_.overBudgetSingles;
      }
      for (size_t b = 0; b < buffers[rank].size(); ++b)
        if (!buffers[rank][b].defined)
          fail(at + " rank " + std::to_string(rank) + ": buffer " +
               std::to_string(b) + " is never filled");
    }
  }

  /// Applies a transform to labels: permutations move them, casts change
  /// only the dtype, reshape / flatten keep the row-major order.
  bool applyTransform(const std::vector<plan::TransformStep> &steps, Buffer &b,
                      std::string &why) {
    for (const plan::TransformStep &step : steps) {
      switch (step.kind) {
      case plan::TransformStep::Kind::Cast:
        b.dtype = step.dtype;
        break;
      case plan::TransformStep::Kind::Permute: {
        const Permutation &p = step.permutation;
        size_t n = b.shape.size();
        if (p.rank() != n) {
          why = "permutation of rank " + std::to_string(p.rank()) +
                " on data of rank " + std::to_string(n);
          return false;
        }
        std::vector<int64_t> shape(n);
        for (size_t i = 0; i < n; ++i)
          shape[i] = b.shape[p[i]];
        Box in = wholeBox(b.shape), outBox = wholeBox(shape);
        std::vector<Label> data;
        data.reserve(b.data.size());
        forEachPoint(outBox, [&](const Point &q) {
          Point c(n);
          for (size_t i = 0; i < n; ++i)
            c[p[i]] = q[i];
          data.push_back(b.data[size_t(indexIn(in, c))]);
        });
        b.shape = shape;
        b.data = std::move(data);
        break;
      }
      case plan::TransformStep::Kind::Reshape: {
        // [blocks * c1, prod(r)] -> [blocks, c1, r...]
        const std::vector<int64_t> &canon = step.canonical;
        int64_t rest = 1;
        for (size_t i = 2; i < canon.size(); ++i)
          rest *= canon[i];
        if (b.shape.size() != 2 || b.shape[1] != rest ||
            b.shape[0] % canon[1] != 0) {
          why = "reshape " + str(canon) + " of " + str(b.shape);
          return false;
        }
        std::vector<int64_t> shape = canon;
        shape[0] = b.shape[0] / canon[1];
        b.shape = shape;
        break;
      }
      case plan::TransformStep::Kind::Flatten: {
        const std::vector<int64_t> &canon = step.canonical;
        if (b.shape.size() != canon.size() ||
            !std::equal(canon.begin() + 1, canon.end(), b.shape.begin() + 1)) {
          why = "flatten " + str(canon) + " of " + str(b.shape);
          return false;
        }
        int64_t rest = 1;
        for (size_t i = 2; i < canon.size(); ++i)
          rest *= canon[i];
        b.shape = {b.shape[0] * canon[1], rest};
        break;
      }
      }
    }
    return true;
  }

  void write(uint32_t rank, const plan::Instruction &in, Buffer *b,
             const std::string &at) {
    std::string where = at + " write";
    if (!b)
      return;
    if (in.tensor >= plan_.destinationTensors.size()) {
      fail(where + ": bad tensor");
      return;
    }
    const plan::StoredTensor &t = plan_.destinationTensors[in.tensor];
    if (plan_.destinationFiles[t.file].rank != rank)
      fail(where + " of " + t.name + ": its file is on rank " +
           std::to_string(plan_.destinationFiles[t.file].rank));
    if (!b->defined) {
      fail(where + ": unfilled buffer");
      return;
    }
    if (b->dtype != t.dtype || b->shape != in.region.shape() ||
        in.region.rank() != t.box.rank()) {
      fail(where + ": buffer " + str(b->shape) + " " +
           std::string(dtypeName(b->dtype)) + " for " + t.key +
           in.region.toString() + " " + std::string(dtypeName(t.dtype)));
      return;
    }
    size_t next = 0;
    forEachPoint(in.region, [&](const Point &p) {
      const Label &label = b->data[next++];
      int64_t i = storedIndex(t, p);
      if (i < 0) {
        fail(where + ": " + t.key + str(p) + " is not stored in " + t.name);
        return;
      }
      auto &slot = written_[in.tensor][size_t(i)];
      ++slot.first;
      slot.second = label;
      ++stats_.elements;
      // Data from another rank only when this rank has no replica of it.
      bool local =
          label.key >= 0 &&
          (storedOnRank_[size_t(label.key)][size_t(label.index)] >> rank & 1);
      if (local &&
          __builtin_popcount(
              storedOnRank_[size_t(label.key)][size_t(label.index)]) > 1)
        ++stats_.localReplicaChoices;
      if (b->originRank != int(rank) && local)
        fail(where + ": " + t.key + str(p) + " came from rank " +
             std::to_string(b->originRank) + " though rank " +
             std::to_string(rank) + " stores its source element");
    });
  }

  void checkDestinations() {
    for (size_t d = 0; d < plan_.destinationTensors.size(); ++d) {
      const plan::StoredTensor &t = plan_.destinationTensors[d];
      int64_t begin = t.flat ? t.flat->begin : 0;
      for (size_t i = 0; i < written_[d].size(); ++i) {
        Point p = pointAt(t.box, begin + int64_t(i));
        const auto &[count, label] = written_[d][i];
        std::string where = "destination " + t.key + str(p) + " in " +
                            plan_.destinationFiles[t.file].path + ":" + t.name;
        if (count != 1) {
          fail(where + " written " + std::to_string(count) + " times");
          continue;
        }
        auto [key, q] = c_.predict(t.key, p);
        int32_t id = keyId(key);
        Label expected{
            id, id < 0 ? -1 : indexIn(wholeBox(keyShapes_[size_t(id)]), q)};
        if (!(label == expected)) {
          std::string got =
              label.key < 0
                  ? "?"
                  : c_.source[size_t(label.key)].key +
                        str(pointAt(wholeBox(keyShapes_[size_t(label.key)]),
                                    label.index));
          fail(where + " holds " + got + ", expected " + key + str(q));
        }
      }
    }
  }

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

std::string joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const std::string &l : lines)
    s += l + "\n";
  return s;
}

/// Compiles and executes `c`; returns failures (empty when all is well).
std::vector<std::string> compileAndRun(const Case &c, Stats &stats) {
  Compiled compiled = compile(c);
  if (!compiled.ok) {
    std::vector<std::string> out = {"compilation failed"};
    out.insert(out.end(), compiled.errors.begin(), compiled.errors.end());
    return out;
  }
  ++stats.cases;
  return Executor(c, compiled.plan, stats).run();
}

//===----------------------------------------------------------------------===//
// Randomized tests
//===----------------------------------------------------------------------===//

void runRandom(Kind kind, uint64_t seed, int count) {
  Rng rng(seed);
  Stats stats;
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    Case c = randomCase(rng, kind);
    std::vector<std::string> errors = compileAndRun(c, stats);
    if (!errors.empty()) {
      ADD_FAILURE() << "case " << i << " (seed " << seed << ")\n"
                    << c.describe() << joined(errors);
      if (++failures >= 3)
        return;
    }
  }
  // The generator exercises what it should.
  EXPECT_EQ(stats.cases, size_t(count));
  std::cerr << "[" << kindName(kind) << "] cases " << stats.cases << ", rounds "
            << stats.rounds << " (multi-round cases " << stats.multiRound
            << "), reads " << stats.reads << ", messages " << stats.messages
            << ", copies " << stats.copies << ", writes " << stats.writes
            << ", elements " << stats.elements << ", flat source shards "
            << stats.flatSource << ", flat destination shards "
            << stats.flatDestination << ", keys with source replicas "
            << stats.replicatedSource << ", over-budget single-transfer rounds "
            << stats.overBudgetSingles
            << ", elements whose writer holds one of several replicas "
            << stats.localReplicaChoices
            << ", source elements read again by overlapping reads "
            << stats.elementsReadAgain << "\n";
}

TEST(PlanResolution, RandomIdentity) { runRandom(Kind::Identity, 1, 150); }
TEST(PlanResolution, RandomRename) { runRandom(Kind::Rename, 2, 60); }
TEST(PlanResolution, RandomTranspose) { runRandom(Kind::Transpose, 3, 60); }
TEST(PlanResolution, RandomPermute) { runRandom(Kind::Permute, 4, 60); }
TEST(PlanResolution, RandomConcat) { runRandom(Kind::Concat, 5, 60); }
TEST(PlanResolution, RandomSplit) { runRandom(Kind::Split, 6, 60); }
TEST(PlanResolution, RandomCast) { runRandom(Kind::Cast, 7, 60); }
TEST(PlanResolution, RandomPermuteCast) { runRandom(Kind::PermuteCast, 8, 60); }
TEST(PlanResolution, RandomReshape) { runRandom(Kind::Reshape, 9, 40); }
TEST(PlanResolution, RandomMixed) { runRandom(Kind::Mixed, 10, 40); }

//===----------------------------------------------------------------------===//
// Error cases
//===----------------------------------------------------------------------===//

/// True when some error diagnostic contains `needle`.
bool hasError(const Compiled &compiled, const std::string &needle) {
  for (const std::string &e : compiled.errors)
    if (e.find(needle) != std::string::npos)
      return true;
  return false;
}

Kind randomKind(Rng &rng) {
  static const Kind kKinds[] = {
      Kind::Identity, Kind::Rename,      Kind::Transpose,
      Kind::Permute,  Kind::Concat,      Kind::Split,
      Kind::Cast,     Kind::PermuteCast, Kind::Reshape};
  return kKinds[rng.range(0, 8)];
}

/// The stored unit of a source shard: its box and flat range ([0, volume)
/// and no range are the same).
std::pair<Box, std::pair<int64_t, int64_t>> unitOf(const ShardSpec &s) {
  if (s.flat)
    return {s.box, {s.flat->begin, s.flat->end}};
  return {s.box, {0, s.box.volume()}};
}

void expectError(const Case &c, const std::string &needle, int i) {
  Compiled compiled = compile(c);
  EXPECT_FALSE(compiled.ok) << "case " << i << "\n" << c.describe();
  EXPECT_TRUE(hasError(compiled, needle))
      << "case " << i << ": no error mentions '" << needle << "'\n"
      << c.describe() << joined(compiled.errors);
}

// Dropping every replica of one stored unit leaves a hole; a key stored as
// one unit keeps a smaller part of it instead (a key with no shards at all
// is SourceKeyWithoutShardsIsAHole).
TEST(PlanResolution, SourceHoleIsAnError) {
  Rng rng(101);
  int tested = 0;
  for (int i = 0; i < 60; ++i) {
    Case c = randomCase(rng, randomKind(rng));
    KeySpec &k = c.source[size_t(rng.range(0, int64_t(c.source.size()) - 1))];
    if (c.kind == std::string("reshape") && k.key == "a")
      continue; // a hole under a reshape: HoleUnderReshapeIsAHole
    auto unit =
        unitOf(k.shards[size_t(rng.range(0, int64_t(k.shards.size()) - 1))]);
    bool only =
        std::all_of(k.shards.begin(), k.shards.end(),
                    [&](const ShardSpec &s) { return unitOf(s) == unit; });
    if (only) {
      int64_t volume = k.shards[0].box.volume();
      if (volume < 2)
        continue;
      // Keep elements [0, volume - 1) or [1, volume) of the box.
      FlatElementRange kept = rng.chance(0.5) ? FlatElementRange{0, volume - 1}
                                              : FlatElementRange{1, volume};
      for (ShardSpec &s : k.shards)
        s.flat = kept;
    } else {
      k.shards.erase(
          std::remove_if(k.shards.begin(), k.shards.end(),
                         [&](const ShardSpec &s) { return unitOf(s) == unit; }),
          k.shards.end());
    }
    ++tested;
    expectError(c, "in no stored shard", i);
  }
  EXPECT_GT(tested, 40);
}

// A shard over stored units of other boxes: not their replica (replicas
// have equal boxes, whatever their flat ranges).
TEST(PlanResolution, OverlappingSourceShardsAreAnError) {
  Rng rng(102);
  for (int i = 0; i < 60; ++i) {
    Case c = randomCase(rng, randomKind(rng));
    KeySpec &k = c.source[size_t(rng.range(0, int64_t(c.source.size()) - 1))];
    Box whole = wholeBox(k.shape);
    bool single = true;
    for (const ShardSpec &s : k.shards)
      single &= s.box == whole;
    ShardSpec extra;
    extra.rank = uint32_t(rng.range(0, kMaxRank));
    extra.file = fileOf("src", extra.rank);
    extra.name = k.key + "@overlap";
    extra.box = whole;
    if (single) {
      // Every shard has the key's box (whole or flat ranges of it), so a
      // whole-key shard would be their replica: overlap them with a strict
      // part of the key.
      if (whole.volume() < 2)
        continue;
      std::vector<int64_t> shape = k.shape;
      size_t axis = 0;
      while (shape[axis] < 2)
        ++axis;
      shape[axis] -= 1;
      extra.box = Box(std::vector<int64_t>(shape.size(), 0), shape);
    }
    k.shards.insert(k.shards.begin() + rng.range(0, int64_t(k.shards.size())),
                    extra);
    expectError(c, "overlap", i);
  }
}

// Two ranks' shards in one file, on either side.
TEST(PlanResolution, FileOnTwoRanksIsAnError) {
  Rng rng(103);
  for (int i = 0; i < 60; ++i) {
    Kind kind = randomKind(rng);
    Case c = randomCase(rng, kind);
    bool destination = rng.chance(0.5);
    std::vector<KeySpec> &keys = destination ? c.destination : c.source;
    if (!destination)
      // Every stored source shard is read only without replicas.
      for (KeySpec &k : keys) {
        k.shards.clear();
        randomSourceLayout(rng, k, /*replicas=*/false);
      }
    std::vector<ShardSpec *> all;
    for (KeySpec &k : keys)
      for (ShardSpec &s : k.shards)
        all.push_back(&s);
    if (all.size() < 2) {
      // One shard: give the key a second one in the same file.
      KeySpec &k = keys[0];
      k.shards.clear();
      if (destination)
        randomDestinationLayout(rng, k);
      else
        randomSourceLayout(rng, k, false);
      all.clear();
      for (KeySpec &key : keys)
        for (ShardSpec &s : key.shards)
          all.push_back(&s);
      if (all.size() < 2)
        continue;
    }
    size_t a = size_t(rng.range(0, int64_t(all.size()) - 1));
    size_t b = (a + size_t(rng.range(1, int64_t(all.size()) - 1))) % all.size();
    all[b]->file = all[a]->file;
    if (all[b]->rank == all[a]->rank)
      all[b]->rank = (all[a]->rank + 1) % (kMaxRank + 1);
    expectError(c, "belongs to rank", i);
  }
}

/// Hand-built layouts.
ShardSpec shard(uint32_t rank, const char *side, std::string name, Box box,
                std::optional<FlatElementRange> flat = std::nullopt) {
  ShardSpec s;
  s.rank = rank;
  s.file = fileOf(side, rank);
  s.name = std::move(name);
  s.box = std::move(box);
  s.flat = flat;
  return s;
}

KeySpec key(std::string name, std::vector<int64_t> shape,
            std::vector<ShardSpec> shards, DType dtype = DType::F32) {
  KeySpec k;
  k.key = std::move(name);
  k.dtype = dtype;
  k.shape = std::move(shape);
  k.shards = std::move(shards);
  return k;
}

//===----------------------------------------------------------------------===//
// The checker itself: corrupted plans must be caught
//===----------------------------------------------------------------------===//

/// Every failure the executor would report for `plan` of `c`.
std::vector<std::string> execute(const Case &c, const plan::Plan &plan) {
  Stats stats;
  return Executor(c, plan, stats).run();
}

/// (rank, round, instruction) of every instruction with `opcode`.
std::vector<std::tuple<size_t, size_t, size_t>>
instructionsOf(const plan::Plan &plan, plan::Opcode opcode) {
  std::vector<std::tuple<size_t, size_t, size_t>> out;
  for (size_t r = 0; r < plan.programs.size(); ++r)
    for (size_t n = 0; n < plan.programs[r].rounds.size(); ++n)
      for (size_t i = 0; i < plan.programs[r].rounds[n].instructions.size();
           ++i)
        if (plan.programs[r].rounds[n].instructions[i].opcode == opcode)
          out.push_back({r, n, i});
  return out;
}

TEST(PlanResolution, CheckerCatchesCorruptedPlans) {
  Rng rng(200);
  int caught[4] = {0, 0, 0, 0}, tried[4] = {0, 0, 0, 0};
  for (int i = 0; i < 80; ++i) {
    Case c = randomCase(rng, randomKind(rng));
    Compiled compiled = compile(c);
    ASSERT_TRUE(compiled.ok) << c.describe() << joined(compiled.errors);
    ASSERT_TRUE(execute(c, compiled.plan).empty());
    int mutation = int(rng.range(0, 3));
    plan::Plan plan = compiled.plan;
    auto pick = [&](plan::Opcode op) -> plan::Instruction * {
      auto all = instructionsOf(plan, op);
      if (all.empty())
        return nullptr;
      auto [r, n, k] = all[size_t(rng.range(0, int64_t(all.size()) - 1))];
      return &plan.programs[r].rounds[n].instructions[k];
    };
    auto erase = [&](plan::Opcode op) {
      auto all = instructionsOf(plan, op);
      if (all.empty())
        return false;
      auto [r, n, k] = all[size_t(rng.range(0, int64_t(all.size()) - 1))];
      auto &list = plan.programs[r].rounds[n].instructions;
      list.erase(list.begin() + std::ptrdiff_t(k));
      return true;
    };
    bool applied = false;
    switch (mutation) {
    case 0: // a write lost: elements unwritten
      applied = erase(plan::Opcode::Write);
      break;
    case 1: // a write repeated: elements written twice
      if (plan::Instruction *w = pick(plan::Opcode::Write)) {
        plan::Instruction copy = *w;
        for (auto &program : plan.programs)
          for (auto &round : program.rounds)
            for (size_t k = 0; k < round.instructions.size(); ++k)
              if (&round.instructions[k] == w) {
                round.instructions.push_back(copy);
                applied = true;
              }
      }
      break;
    case 2: // a receive lost: unmatched send, unfilled buffer
      applied = erase(plan::Opcode::Recv);
      break;
    case 3: // a read shifted by one: wrong labels or unstored elements
      if (plan::Instruction *r = pick(plan::Opcode::Read)) {
        std::vector<int64_t> delta(r->region.rank(), 0);
        delta[size_t(rng.range(0, int64_t(delta.size()) - 1))] = 1;
        r->region = r->region.translate(delta);
        applied = true;
      }
      break;
    }
    if (!applied)
      continue;
    ++tried[mutation];
    if (!execute(c, plan).empty())
      ++caught[mutation];
    else
      ADD_FAILURE() << "mutation " << mutation << " not caught\n"
                    << c.describe();
  }
  for (int m = 0; m < 4; ++m)
    EXPECT_GT(tried[m], 5) << "mutation " << m;
}

// A remote read although the writing rank stores a replica; a cast made
// with the wrong dtype; a transposition dropped; a budget overrun.
TEST(PlanResolution, CheckerCatchesPolicyViolations) {
  Case c;
  c.kind = "transpose";
  c.config = "a^T -> b\n";
  c.model["b"] = permuteModel("a", {1, 0});
  c.source.push_back(key("a", {2, 3},
                         {shard(0, "src", "a", Box({0, 0}, {2, 3})),
                          shard(1, "src", "a", Box({0, 0}, {2, 3}))}));
  c.destination.push_back(
      key("b", {3, 2}, {shard(1, "dst", "b", Box({0, 0}, {3, 2}))}));
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  ASSERT_TRUE(execute(c, compiled.plan).empty());

  // Read on rank 0 from its replica and send it to rank 1.
  plan::Plan remote = compiled.plan;
  plan::StoredTensor replica = remote.sourceTensors[0];
  replica.name = "a";
  replica.file = uint32_t(remote.sourceFiles.size());
  remote.sourceFiles.push_back(plan::File{fileOf("src", 0), 0});
  remote.sourceTensors.push_back(replica);
  plan::Round &r0 = remote.programs[0].rounds[0];
  plan::Round &r1 = remote.programs[1].rounds[0];
  ASSERT_EQ(r1.instructions[0].opcode, plan::Opcode::Read);
  plan::Instruction read = r1.instructions[0];
  r0.buffers.push_back(r1.buffers[read.buffer]);
  read.buffer = uint32_t(r0.buffers.size() - 1);
  read.tensor = uint32_t(remote.sourceTensors.size() - 1);
  r0.instructions.push_back(read);
  plan::Instruction send;
  send.opcode = plan::Opcode::Send;
  send.peer = 1;
  send.buffers = {read.buffer};
  r0.instructions.push_back(send);
  plan::Instruction recv;
  recv.opcode = plan::Opcode::Recv;
  recv.peer = 0;
  recv.buffers = {r1.instructions[0].buffer};
  r1.instructions[0] = recv;
  std::string all = joined(execute(c, remote));
  EXPECT_NE(all.find("stores its source element"), std::string::npos) << all;

  // The copy's transposition dropped: shapes or labels no longer agree.
  plan::Plan unpermuted = compiled.plan;
  for (plan::Instruction &in : unpermuted.programs[1].rounds[0].instructions)
    if (in.opcode == plan::Opcode::Copy)
      in.transform.clear();
  EXPECT_FALSE(execute(c, unpermuted).empty());

  // A cast to the wrong dtype.
  plan::Plan cast = compiled.plan;
  for (plan::Instruction &in : cast.programs[1].rounds[0].instructions)
    if (in.opcode == plan::Opcode::Copy) {
      plan::TransformStep step;
      step.kind = plan::TransformStep::Kind::Cast;
      step.dtype = DType::F16;
      in.transform.push_back(step);
    }
  EXPECT_FALSE(execute(c, cast).empty());

  // Two transfers' buffers in one round over the budget.
  plan::Plan tight = compiled.plan;
  tight.memoryBudget = 1;
  plan::Round &round = tight.programs[1].rounds[0];
  round.buffers.push_back(round.buffers[0]);
  plan::Instruction extra = round.instructions[0];
  extra.buffer = uint32_t(round.buffers.size() - 1);
  round.instructions.insert(round.instructions.begin() + 1, extra);
  all = joined(execute(c, tight));
  EXPECT_NE(all.find("over the budget"), std::string::npos) << all;
}

//===----------------------------------------------------------------------===//
// Regression tests of former bugs
//===----------------------------------------------------------------------===//

// Regression test (was a known bug).
// A source key present in the metadata with no stored shard at all.
// Input: source `x` float32[4] with no shards; destination `x` [0:4] on
// rank 0; no statements (ShardMetadataBuilder accepts a tensor without
// shards; the JSON metadata loader rejects one with "has no shards").
// Was (fixed): resolve-shard-sources says nothing (ResolveShardSources.cpp
// bindEntry returns early on `pieces.empty()`, which it takes to mean
// "its shards overlap; reported"); only verify reports
// "x[0:4] in 'dst_r0.safetensors': 4 of its 4 elements have no source".
// Expected: the hole diagnostic "... 4 of its elements are in no stored
// shard of the source", like any other hole.
TEST(PlanResolution, SourceKeyWithoutShardsIsAHole) {
    Case c;
  c.kind = "hole";
  c.source.push_back(key("x", {4}, {}));
  c.destination.push_back(key("x", {4}, {shard(0, "dst", "x", Box({0}, {4}))}));
  Compiled compiled = compile(c);
  EXPECT_FALSE(compiled.ok);
  EXPECT_TRUE(hasError(compiled, "in no stored shard"))
      << joined(compiled.errors);
}

// Regression test (was a known bug).
// A hole in a source that is reshaped is reported as a region "several
// stored shards hold".
// Input: source `a` float32[4, 1], one shard on rank 0, box [0:4, 0:1] with
// flat range [0, 3) (element 3 is stored nowhere); destination `b`
// float32[2, 2, 1] whole on rank 0; `a -> b, reshape='[2, 2, 1]'`.
// Was (fixed): "'b[0:2, 0:2, 0:1]' comes from a[0:4, 0:1], which several stored
// shards hold, through a reshape; splitting a reshaped region is not
// supported" (bindEntry checks `*part != wanted` before counting what is
// found). Expected: the hole diagnostic "... 1 of its elements are in no
// stored shard of the source": one shard holds part of the region and
// nothing holds the rest.
TEST(PlanResolution, HoleUnderReshapeIsAHole) {
    Case c;
  c.kind = "reshape";
  c.config = "a -> b, reshape='[2, 2, 1]'\n";
  c.source.push_back(
      key("a", {4, 1},
          {shard(0, "src", "a", Box({0, 0}, {4, 1}), FlatElementRange{0, 3})}));
  c.destination.push_back(
      key("b", {2, 2, 1}, {shard(0, "dst", "b", Box({0, 0, 0}, {2, 2, 1}))}));
  Compiled compiled = compile(c);
  EXPECT_FALSE(compiled.ok);
  EXPECT_TRUE(hasError(compiled, "in no stored shard"))
      << joined(compiled.errors);
}

// Regression test (was a known bug).
// An optimizer state that follows a cast model weight is rounded through
// the weight's dtype.
// Input: source `w` float32[2] and `w.moment1_0` float32[2] (rank 0, one
// file); destination `w` float16[2] and `w.moment1_0` float32[2] (rank 0);
// `w -> w, dtype='float16'`.
// Was (fixed): the state's copy is ["float16", "float32"]
// (ResolveShardSources.cpp transformOf appends a cast back to the state's
// dtype): every moment value is rounded to float16 precision (and values
// beyond 65504 become inf) although neither side stores it as float16.
// Expected: the state keeps its stored dtype untouched (Paddle casts model
// weights only): no cast at all in its transform.
TEST(PlanResolution, OptimizerStatesKeepTheirPrecision) {
    Case c;
  c.kind = "cast";
  c.config = "w -> w, dtype='float16'\n";
  c.source.push_back(key("w", {2}, {shard(0, "src", "w", Box({0}, {2}))}));
  c.source.push_back(
      key("w.moment1_0", {2}, {shard(0, "src", "w.moment1_0", Box({0}, {2}))}));
  c.destination.push_back(
      key("w", {2}, {shard(0, "dst", "w", Box({0}, {2}))}, DType::F16));
  c.destination.push_back(
      key("w.moment1_0", {2}, {shard(0, "dst", "w.moment1_0", Box({0}, {2}))}));
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  for (const plan::RankProgram &program : compiled.plan.programs)
    for (const plan::Round &round : program.rounds)
      for (const plan::Instruction &in : round.instructions) {
        if (in.opcode != plan::Opcode::Write ||
            compiled.plan.destinationTensors[in.tensor].key != "w.moment1_0")
          continue;
        // The written buffer, traced back through copies.
        for (const plan::Instruction &copy : round.instructions) {
          if (copy.opcode != plan::Opcode::Copy || copy.buffer != in.buffer)
            continue;
          for (const plan::TransformStep &step : copy.transform)
            EXPECT_FALSE(step.kind == plan::TransformStep::Kind::Cast)
                << "w.moment1_0 is cast to " << step.text();
        }
      }
}

// Regression test (was a known bug).
// Replicas (equal global_offset and local_shape) stored differently: one
// whole, one as flat ranges.
// Input: source `x` float32[2]: rank 0 stores box [0:2] whole ('src_r0'),
// rank 1 stores the same box as flat ranges [0, 1) and [1, 2) ('src_r1');
// destination `x` [0:2] on rank 0; no statements.
// Was (fixed): "source key 'x': stored shards overlap in [0:1] (in
// 'src_r1...' and 'src_r0...') without being replicas", whose hint says
// "replicas have equal global_offset and local_shape" -- which these have.
// Expected: accepted (shards with one box are replicas whatever their flat
// ranges, SourceReplicas.h); rank 0 reads its own whole copy.
TEST(PlanResolution, ReplicasWithDifferentFlatSplits) {
  Case c;
  c.kind = "identity";
  c.source.push_back(
      key("x", {2},
          {shard(0, "src", "x", Box({0}, {2})),
           shard(1, "src", "x0", Box({0}, {2}), FlatElementRange{0, 1}),
           shard(1, "src", "x1", Box({0}, {2}), FlatElementRange{1, 2})}));
  c.destination.push_back(key("x", {2}, {shard(0, "dst", "x", Box({0}, {2}))}));
  Stats stats;
  std::vector<std::string> errors = compileAndRun(c, stats);
  EXPECT_TRUE(errors.empty()) << joined(errors);
}

// Overlapping (not identical) regions of one source tensor on one rank are
// cut into pieces that are equal or disjoint, so no source byte is read twice
// (Schedule.cpp, SplitOverlappingReads.h).
// Input: source `x` float32[4] whole on rank 0; destination `x` replicated:
// whole on rank 1, and as flat ranges [0, 2) and [2, 4) on rank 2.
// Expected: rank 0 reads [0:2] and [2:4] once each; both replicas are built
// from those two reads (this used to read [0:4] and then [0:2], [2:4] again).
TEST(PlanResolution, SourceBytesReadOnceOnOneRank) {
  Case c;
  c.kind = "identity";
  c.source.push_back(key("x", {4}, {shard(0, "src", "x", Box({0}, {4}))}));
  c.destination.push_back(
      key("x", {4},
          {shard(1, "dst", "x", Box({0}, {4})),
           shard(2, "dst", "x0", Box({0}, {4}), FlatElementRange{0, 2}),
           shard(2, "dst", "x1", Box({0}, {4}), FlatElementRange{2, 4})}));
  Stats stats;
  std::vector<std::string> errors = compileAndRun(c, stats);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  EXPECT_EQ(stats.elementsReadAgain, 0u);
}

/// One source key `a` read by 2..4 statements (copy, permute, cast, split in
/// two), each destination with its own random layout (grids, replicas, flat
/// ranges split differently), under budgets small enough that cutLarge cuts
/// along different axes: the regions a rank reads from `a` overlap in every
/// way. With `reshape`, `a` is stored whole (replicated) and one more
/// statement reshapes it, as in Kind::Reshape.
Case fanOutCase(Rng &rng, bool reshape) {
  Case c;
  c.kind = reshape ? "fan-out+reshape" : "fan-out";
  static const int64_t kBudgets[] = {16,  48,   64,   100,
                                     256, 1000, 4096, int64_t(1) << 30};
  c.budget = kBudgets[rng.range(0, 7)];
  DType dtype = randomFloat(rng);
  if (dtype == DType::F16)
    dtype = DType::F32; // a cast to float16 must change it
  std::ostringstream config;
  KeySpec a;
  a.key = "a";
  a.dtype = dtype;
  if (reshape) {
    std::vector<int64_t> canonical = {rng.range(1, 3), rng.range(1, 3),
                                      rng.range(1, 3)};
    std::vector<int64_t> flattened = {canonical[0] * canonical[1],
                                      canonical[2]};
    bool flatten = rng.chance(0.5);
    std::vector<int64_t> from = flatten ? canonical : flattened;
    std::vector<int64_t> to = flatten ? flattened : canonical;
    a.shape = from;
    int counter = 0;
    for (int64_t r : rng.distinct(0, kMaxRank, size_t(rng.range(1, 2))))
      a.shards.push_back(shard(uint32_t(r), "src",
                               "a@" + std::to_string(counter++),
                               wholeBox(from)));
    KeySpec out = key("r", to, {}, dtype);
    int64_t unit = flatten ? canonical[1] : 1;
    for (const Interval &blocks : randomCuts(rng, canonical[0])) {
      std::vector<int64_t> offset(to.size(), 0), extent = to;
      offset[0] = blocks.begin * unit;
      extent[0] = (blocks.end - blocks.begin) * unit;
      uint32_t r = uint32_t(rng.range(0, kMaxRank));
      out.shards.push_back(shard(r, "dst", "r@" + std::to_string(counter++),
                                 Box(offset, extent)));
    }
    c.destination.push_back(out);
    config << "a -> r, reshape='" << str(canonical) << "'\n";
    Box fromBox = wholeBox(from), toBox = wholeBox(to);
    c.model["r"] = [fromBox, toBox](const std::string &, const Point &q) {
      return std::make_pair(std::string("a"),
                            pointAt(fromBox, indexIn(toBox, q)));
    };
  } else {
    a.shape = randomShape(rng, size_t(rng.range(1, 3)), 6);
    randomSourceLayout(rng, a);
  }
  c.source.push_back(a);
  size_t rank = a.shape.size();
  std::vector<int> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  for (int64_t j = rng.range(2, 4); j > 0; --j) {
    std::string name = "b" + std::to_string(j);
    int64_t pick = rng.range(0, 3);
    size_t axis = size_t(rng.range(0, int64_t(rank) - 1));
    if (pick == 3 && a.shape[axis] % 2 != 0)
      pick = 0; // no even split along that axis: a copy
    switch (pick) {
    case 0:
      c.destination.push_back(destinationKey(rng, name, dtype, a.shape));
      config << "a -> " << name << "\n";
      c.model[name] = permuteModel("a", identity);
      break;
    case 1: {
      std::vector<int> perm = identity;
      rng.shuffle(perm);
      c.destination.push_back(
          destinationKey(rng, name, dtype, permuted(a.shape, perm)));
      config << "a -> " << name << ", permute='" << spellPermutation(rng, perm)
             << "'\n";
      c.model[name] = permuteModel("a", perm);
      break;
    }
    case 2:
      c.destination.push_back(destinationKey(rng, name, DType::F16, a.shape));
      config << "a -> " << name << ", dtype='float16'\n";
      c.model[name] = permuteModel("a", identity);
      break;
    default: {
      std::vector<int64_t> half = a.shape;
      half[axis] /= 2;
      config << "a -> " << name << "_0, " << name << "_1, axis=" << axis
             << "\n";
      for (int64_t part = 0; part < 2; ++part) {
        std::string piece = name + "_" + std::to_string(part);
        c.destination.push_back(destinationKey(rng, piece, dtype, half));
        int64_t offset = half[axis] * part;
        c.model[piece] = [offset, axis](const std::string &, const Point &p) {
          Point q = p;
          q[axis] += offset;
          return std::make_pair(std::string("a"), q);
        };
      }
      break;
    }
    }
  }
  c.config = config.str();
  return c;
}

// Overlapping reads in every shape (fanOutCase): besides every check of the
// random tests above, no source element is read twice on its rank (a source
// tensor is read on one rank only), except where a statement reshapes: its
// transfers cannot be cut (Schedule.cpp), so there elements may be read again
// (counted and printed, not checked).
TEST(PlanResolution, RandomFanOutReadsEverySourceElementOnce) {
  Rng rng(11);
  Stats plain, reshaped;
  int failures = 0;
  for (int i = 0; i < 150 && failures < 3; ++i) {
    bool reshape = rng.chance(0.25);
    Case c = fanOutCase(rng, reshape);
    Stats stats;
    std::vector<std::string> errors = compileAndRun(c, stats);
    if (!reshape && stats.elementsReadAgain != 0)
      errors.push_back(std::to_string(stats.elementsReadAgain) +
                       " source elements read twice on their rank");
    if (!errors.empty()) {
      ADD_FAILURE() << "case " << i << "\n" << c.describe() << joined(errors);
      ++failures;
    }
    Stats &sum = reshape ? reshaped : plain;
    sum.cases += stats.cases;
    sum.reads += stats.reads;
    sum.multiRound += stats.multiRound;
    sum.elementsReadAgain += stats.elementsReadAgain;
  }
  EXPECT_GT(reshaped.cases, 0u);
  std::cerr << "[fan-out] cases " << plain.cases << " (multi-round "
            << plain.multiRound << "), reads " << plain.reads
            << "; with a reshape: cases " << reshaped.cases << ", reads "
            << reshaped.reads << ", source elements read again "
            << reshaped.elementsReadAgain << "\n";
}

} // namespace

//===----------------------------------------------------------------------===//
// Replicas stored in different shapes
//===----------------------------------------------------------------------===//

namespace {

/// Source keys that a reshape statement of `config` reads.
std::set<std::string> reshapedSources(const std::string &config) {
  std::set<std::string> keys;
  std::istringstream lines(config);
  for (std::string line; std::getline(lines, line);) {
    size_t arrow = line.find("->");
    if (arrow == std::string::npos ||
        line.find("reshape=") == std::string::npos)
      continue;
    std::string source = line.substr(0, arrow);
    source.erase(source.find_last_not_of(' ') + 1);
    keys.insert(source);
  }
  return keys;
}

/// A shard of key `k` on `rank`, in the rank's usual source file or, now
/// and then, in a second one (so a rank may hold two copies of an element
/// in two files).
ShardSpec shapedShard(Rng &rng, const KeySpec &k, int &counter, uint32_t rank,
                      const Box &box, std::optional<FlatElementRange> flat) {
  ShardSpec s;
  s.rank = rank;
  s.file = rng.chance(0.25) ? "src_r" + std::to_string(rank) + "b.safetensors"
                            : fileOf("src", rank);
  s.name = k.key + "#" + std::to_string(counter++);
  s.box = box;
  s.flat = flat;
  return s;
}

/// One full copy of `box`: whole (sometimes spelled as the flat range
/// [0, volume)), or split into 1..3 flat ranges at cuts of its own, each on
/// a random rank.
void addShapedCopy(Rng &rng, KeySpec &k, int &counter, const Box &box) {
  if (rng.chance(0.4)) {
    std::optional<FlatElementRange> flat;
    if (rng.chance(0.2))
      flat = FlatElementRange{0, box.volume()};
    k.shards.push_back(shapedShard(rng, k, counter,
                                   uint32_t(rng.range(0, kMaxRank)), box,
                                   flat));
    return;
  }
  for (const FlatElementRange &r : randomRanges(rng, box.volume()))
    k.shards.push_back(
        shapedShard(rng, k, counter, uint32_t(rng.range(0, kMaxRank)), box, r));
}

/// Re-lays every source key of `c` with replicas in different shapes: each
/// box of a random grid gets 1..3 full copies (addShapedCopy) and sometimes a
/// partial one (a random flat range). A reshaped key must be read whole from
/// one replica, so it keeps its whole replicas and only gets flat copies on
/// ranks that hold one of them (the writer's own rank stays preferable).
void relayWithShapedReplicas(Rng &rng, Case &c) {
  std::set<std::string> reshaped = reshapedSources(c.config);
  for (KeySpec &k : c.source) {
    int counter = 0;
    if (reshaped.count(k.key)) {
      std::vector<ShardSpec> whole = k.shards;
      for (const ShardSpec &s : whole)
        if (rng.chance(0.7))
          for (const FlatElementRange &r :
               randomRanges(rng, s.box.volume()))
            k.shards.push_back(
                shapedShard(rng, k, counter, s.rank, s.box, r));
      rng.shuffle(k.shards);
      continue;
    }
    k.shards.clear();
    for (const Box &box : randomGrid(rng, k.shape)) {
      for (int64_t n = rng.range(1, 3); n > 0; --n)
        addShapedCopy(rng, k, counter, box);
      if (rng.chance(0.3)) {
        int64_t a = rng.range(0, box.volume() - 1);
        int64_t b = rng.range(a + 1, box.volume());
        k.shards.push_back(shapedShard(rng, k, counter,
                                       uint32_t(rng.range(0, kMaxRank)), box,
                                       FlatElementRange{a, b}));
      }
    }
    rng.shuffle(k.shards);
  }
}

/// Elements [a, b) of a shard's box that it stores.
std::pair<int64_t, int64_t> storedRangeOf(const ShardSpec &s) {
  return unitOf(s).second;
}

/// True when two shards of `k` with one box store it in different shapes.
bool hasShapedReplicas(const KeySpec &k) {
  std::map<std::vector<int64_t>, std::set<std::pair<int64_t, int64_t>>> byBox;
  for (const ShardSpec &s : k.shards) {
    std::vector<int64_t> box = s.box.offsets();
    std::vector<int64_t> shape = s.box.shape();
    box.insert(box.end(), shape.begin(), shape.end());
    byBox[box].insert(storedRangeOf(s));
  }
  for (const auto &entry : byBox) {
    // Different ranges that share an element: copies in different shapes.
    const std::set<std::pair<int64_t, int64_t>> &ranges = entry.second;
    for (auto i = ranges.begin(); i != ranges.end(); ++i)
      for (auto j = std::next(i); j != ranges.end(); ++j)
        if (i->first < j->second && j->first < i->second)
          return true;
  }
  return false;
}

/// Failures for source elements that one rank reads from two different
/// stored tensors (two copies of it): a rank reads an element once.
std::vector<std::string> elementsReadFromTwoCopies(const plan::Plan &plan) {
  std::vector<std::string> failures;
  std::map<std::tuple<size_t, std::string, Point>, uint32_t> readFrom;
  for (size_t rank = 0; rank < plan.programs.size(); ++rank)
    for (const plan::Round &round : plan.programs[rank].rounds)
      for (const plan::Instruction &in : round.instructions) {
        if (in.opcode != plan::Opcode::Read)
          continue;
        const plan::StoredTensor &t = plan.sourceTensors[in.tensor];
        forEachPoint(in.region, [&](const Point &p) {
          auto [it, inserted] =
              readFrom.emplace(std::make_tuple(rank, t.key, p), in.tensor);
          if (!inserted && it->second != in.tensor && failures.size() < 20)
            failures.push_back("rank " + std::to_string(rank) + " reads " +
                               t.key + str(p) + " from source tensors " +
                               std::to_string(it->second) + " and " +
                               std::to_string(in.tensor));
        });
      }
  return failures;
}

/// Bytes each rank reads.
std::vector<int64_t> bytesReadPerRank(const plan::Plan &plan) {
  std::vector<int64_t> bytes(plan.programs.size(), 0);
  for (size_t rank = 0; rank < plan.programs.size(); ++rank)
    for (const plan::Round &round : plan.programs[rank].rounds)
      for (const plan::Instruction &in : round.instructions)
        if (in.opcode == plan::Opcode::Read)
          bytes[rank] +=
              in.region.volume() *
              int64_t(dtypeSize(plan.sourceTensors[in.tensor].dtype));
  return bytes;
}

size_t readsOnRank(const plan::Plan &plan, size_t rank) {
  size_t reads = 0;
  for (const plan::Round &round : plan.programs[rank].rounds)
    for (const plan::Instruction &in : round.instructions)
      reads += in.opcode == plan::Opcode::Read;
  return reads;
}

// Random conversions (every statement kind) whose sources store replicas in
// different shapes; the plans are executed on labels as in the randomized
// tests above, with the same checks (own-rank copies preferred per element,
// every destination element written once with the predicted label), and no
// rank reads an element from two copies.
TEST(PlanResolution, RandomReplicasInDifferentShapes) {
  Rng rng(300);
  Stats stats;
  int failures = 0, shapedKeys = 0, reshaped = 0;
  const int count = 150;
  for (int i = 0; i < count && failures < 3; ++i) {
    Case c = randomCase(rng, i % 6 == 5 ? Kind::Mixed : randomKind(rng));
    relayWithShapedReplicas(rng, c);
    for (const KeySpec &k : c.source)
      shapedKeys += hasShapedReplicas(k);
    reshaped += !reshapedSources(c.config).empty();
    Compiled compiled = compile(c);
    std::vector<std::string> errors;
    if (!compiled.ok) {
      errors = {"compilation failed"};
      errors.insert(errors.end(), compiled.errors.begin(),
                    compiled.errors.end());
    } else {
      ++stats.cases;
      errors = Executor(c, compiled.plan, stats).run();
      std::vector<std::string> twice = elementsReadFromTwoCopies(compiled.plan);
      errors.insert(errors.end(), twice.begin(), twice.end());
    }
    if (!errors.empty()) {
      ADD_FAILURE() << "case " << i << "\n" << c.describe() << joined(errors);
      ++failures;
    }
  }
  EXPECT_EQ(stats.cases, size_t(count));
  // The generator exercises what it should.
  EXPECT_GT(shapedKeys, count);
  EXPECT_GT(reshaped, 10);
  EXPECT_GT(stats.localReplicaChoices, 1000u);
  std::cerr << "[shaped replicas] cases " << stats.cases
            << ", keys with replicas in different shapes " << shapedKeys
            << ", cases with a reshape " << reshaped << ", reads "
            << stats.reads << ", elements " << stats.elements
            << ", elements whose writer holds one of several replicas "
            << stats.localReplicaChoices << "\n";
}

// The same layouts with one element of one key stored nowhere (every copy
// of it cut out of its flat range): the hole is reported, not read from a
// neighbouring copy.
TEST(PlanResolution, RandomHoleAmongShapedReplicasIsAnError) {
  Rng rng(301);
  int tested = 0;
  for (int i = 0; i < 80; ++i) {
    Case c = randomCase(rng, randomKind(rng));
    relayWithShapedReplicas(rng, c);
    KeySpec &k = c.source[size_t(rng.range(0, int64_t(c.source.size()) - 1))];
    const ShardSpec &some =
        k.shards[size_t(rng.range(0, int64_t(k.shards.size()) - 1))];
    Box box = some.box;
    int64_t hole = rng.range(0, box.volume() - 1);
    std::vector<ShardSpec> kept;
    int counter = 0;
    for (const ShardSpec &s : k.shards) {
      auto [a, b] = storedRangeOf(s);
      if (s.box != box || hole < a || hole >= b) {
        kept.push_back(s);
        continue;
      }
      // [a, hole) and [hole + 1, b), where not empty.
      for (auto [from, to] : {std::make_pair(a, hole),
                              std::make_pair(hole + 1, b)})
        if (from < to) {
          ShardSpec part = s;
          part.name = s.name + "~" + std::to_string(counter++);
          part.flat = FlatElementRange{from, to};
          kept.push_back(part);
        }
    }
    k.shards = std::move(kept);
    ++tested;
    expectError(c, "in no stored shard", i);
  }
  EXPECT_EQ(tested, 80);
}

// x float32[2]: whole on rank 0, as flat ranges [0, 1) and [1, 2) on rank 1.
Case xWholeAndSplit(std::vector<ShardSpec> destination) {
  Case c;
  c.kind = "identity";
  c.source.push_back(
      key("x", {2},
          {shard(0, "src", "x", Box({0}, {2})),
           shard(1, "src", "x0", Box({0}, {2}), FlatElementRange{0, 1}),
           shard(1, "src", "x1", Box({0}, {2}), FlatElementRange{1, 2})}));
  c.destination.push_back(key("x", {2}, std::move(destination)));
  return c;
}

// Neither replica is on the writer's rank: the two copies share the reads,
// one element each, although one copy is whole and the other split.
TEST(PlanResolution, ReplicasInDifferentShapesShareReads) {
  Case c = xWholeAndSplit({shard(2, "dst", "x", Box({0}, {2}))});
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_EQ(bytesReadPerRank(compiled.plan),
            (std::vector<int64_t>{4, 4, 0}));
}

// The writer's rank holds a whole copy: one read of it serves the whole
// shard (the segments of the split copy do not cut it), nothing is sent.
// On rank 1 both flat pieces are read locally.
TEST(PlanResolution, OwnRankCopyServesAcrossShapes) {
  Case c = xWholeAndSplit({shard(0, "dst", "x", Box({0}, {2})),
                           shard(1, "dst", "x", Box({0}, {2}))});
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_EQ(bytesReadPerRank(compiled.plan), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(readsOnRank(compiled.plan, 0), 1u);
  EXPECT_EQ(readsOnRank(compiled.plan, 1), 2u);
  for (const plan::RankProgram &program : compiled.plan.programs)
    for (const plan::Round &round : program.rounds)
      for (const plan::Instruction &in : round.instructions)
        EXPECT_NE(in.opcode, plan::Opcode::Send);
}

// Rank 0 holds two copies of x float32[3], in two files: x whole, and x0
// [0, 2) with x1 [2, 3). Destination replicas on ranks 1 and 2 need all of
// x. For rank 1, x[0:2] comes from x (a tie; the first listed) and x[2:3]
// from x1 (its file had read less). Rank 2's x[0:2] would come from x0 by
// file balance, but rank 0 already reads those elements from x: it reads
// each element from one copy, once (the reads are shared), 12 bytes.
TEST(PlanResolution, RankWithTwoCopiesReadsEachElementOnce) {
  Case c;
  c.kind = "identity";
  ShardSpec x0 = shard(0, "src", "x0", Box({0}, {3}), FlatElementRange{0, 2});
  ShardSpec x1 = shard(0, "src", "x1", Box({0}, {3}), FlatElementRange{2, 3});
  x0.file = x1.file = "src_r0b.safetensors";
  c.source.push_back(
      key("x", {3}, {shard(0, "src", "x", Box({0}, {3})), x0, x1}));
  c.destination.push_back(key("x", {3},
                              {shard(1, "dst", "x", Box({0}, {3})),
                               shard(2, "dst", "x", Box({0}, {3}))}));
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_TRUE(elementsReadFromTwoCopies(compiled.plan).empty())
      << joined(elementsReadFromTwoCopies(compiled.plan));
  EXPECT_EQ(bytesReadPerRank(compiled.plan),
            (std::vector<int64_t>{12, 0, 0}));
  std::set<std::string> names;
  for (const plan::StoredTensor &t : compiled.plan.sourceTensors)
    names.insert(t.name);
  EXPECT_EQ(names, (std::set<std::string>{"x", "x1"}));
}

// A reshape needs its region whole from one replica: the whole copy serves
// it (balance alone would split it between the copies).
TEST(PlanResolution, ReshapeReadsAWholeReplica) {
  Case c;
  c.kind = "reshape";
  c.config = "a -> b, reshape='[2, 2, 1]'\n";
  c.source.push_back(key(
      "a", {4, 1},
      {shard(0, "src", "a", Box({0, 0}, {4, 1})),
       shard(1, "src", "a0", Box({0, 0}, {4, 1}), FlatElementRange{0, 3}),
       shard(1, "src", "a1", Box({0, 0}, {4, 1}), FlatElementRange{3, 4})}));
  c.destination.push_back(
      key("b", {2, 2, 1}, {shard(2, "dst", "b", Box({0, 0, 0}, {2, 2, 1}))}));
  Box from = wholeBox({4, 1}), to = wholeBox({2, 2, 1});
  c.model["b"] = [from, to](const std::string &, const Point &q) {
    return std::make_pair(std::string("a"), pointAt(from, indexIn(to, q)));
  };
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
  EXPECT_EQ(bytesReadPerRank(compiled.plan),
            (std::vector<int64_t>{16, 0, 0}));
}

// A shard whose box covers a reshaped region but whose flat range stores
// none of it does not take part: a[2:4] comes whole from the shard that
// stores it. a [4, 1]: box [0:4] flat [0, 2) on rank 0, box [2:4] on rank 1.
TEST(PlanResolution, ReshapeIgnoresBoxesThatStoreNoneOfTheRegion) {
  Case c;
  c.kind = "reshape";
  c.config = "a -> b, reshape='[2, 2, 1]'\n";
  c.source.push_back(key(
      "a", {4, 1},
      {shard(0, "src", "a", Box({0, 0}, {4, 1}), FlatElementRange{0, 2}),
       shard(1, "src", "a", Box({2, 0}, {2, 1}))}));
  c.destination.push_back(
      key("b", {2, 2, 1},
          {shard(0, "dst", "b", Box({0, 0, 0}, {1, 2, 1})),
           shard(1, "dst", "b", Box({1, 0, 0}, {1, 2, 1}))}));
  Box from = wholeBox({4, 1}), to = wholeBox({2, 2, 1});
  c.model["b"] = [from, to](const std::string &, const Point &q) {
    return std::make_pair(std::string("a"), pointAt(from, indexIn(to, q)));
  };
  Compiled compiled = compile(c);
  ASSERT_TRUE(compiled.ok) << joined(compiled.errors);
  EXPECT_TRUE(execute(c, compiled.plan).empty());
}

} // namespace
