//===- PlanResolutionModel.cpp - Compiled plans against a brute-force model ===//
//
// Shared by the PlanResolution*Test files.
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
#include "PlanResolutionModel.h"

#include "aoa/frontend/ConfigLoader.h"
#include "aoa/frontend/Parser.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/SourceManager.h"
#include "aoa/passes/CompilationState.h"
#include "aoa/passes/KeySpace.h"
#include "aoa/passes/Pass.h"
#include "aoa/passes/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>

namespace aoa::plan_resolution_test {

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
void randomSourceLayout(Rng &rng, KeySpec &k, bool replicas, bool flat) {
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

std::vector<int64_t> randomShape(Rng &rng, size_t rank, int64_t maxExtent) {
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

Kind randomKind(Rng &rng) {
  static const Kind kKinds[] = {
      Kind::Identity, Kind::Rename,      Kind::Transpose,
      Kind::Permute,  Kind::Concat,      Kind::Split,
      Kind::Cast,     Kind::PermuteCast, Kind::Reshape};
  return kKinds[rng.range(0, 8)];
}

/// Hand-built layouts.
ShardSpec shard(uint32_t rank, const char *side, std::string name, Box box,
                std::optional<FlatElementRange> flat) {
  ShardSpec s;
  s.rank = rank;
  s.file = fileOf(side, rank);
  s.name = std::move(name);
  s.box = std::move(box);
  s.flat = flat;
  return s;
}

KeySpec key(std::string name, std::vector<int64_t> shape,
            std::vector<ShardSpec> shards, DType dtype) {
  KeySpec k;
  k.key = std::move(name);
  k.dtype = dtype;
  k.shape = std::move(shape);
  k.shards = std::move(shards);
  return k;
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

namespace {

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

} // namespace

std::vector<std::string> executePlan(const Case &c, const plan::Plan &plan,
                                     Stats &stats) {
  return Executor(c, plan, stats).run();
}

/// Every failure the executor would report for `plan` of `c`.
std::vector<std::string> execute(const Case &c, const plan::Plan &plan) {
  Stats stats;
  return executePlan(c, plan, stats);
}


/// True when some error diagnostic contains `needle`.
bool hasError(const Compiled &compiled, const std::string &needle) {
  for (const std::string &e : compiled.errors)
    if (e.find(needle) != std::string::npos)
      return true;
  return false;
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
  return executePlan(c, compiled.plan, stats);
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

} // namespace aoa::plan_resolution_test
