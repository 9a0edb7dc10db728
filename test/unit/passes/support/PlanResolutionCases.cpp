//===- PlanResolutionCases.cpp - Random statements and their model --------===//
//
// Random cases of PlanResolutionModel.h: per statement kind (identity,
// rename, `^T`, permute, concat, split, cast, permute+cast, reshape, and
// several of them in one config) the layouts, the .aoa text and the
// brute-force model of what each destination element must hold. The calls
// on the Rng are in a fixed order: a seed always gives the same case.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionModel.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <sstream>

namespace aoa::plan_resolution_test {

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

namespace {

/// `a -> b`.
void addRenameCase(Rng &rng, Case &c, size_t rank, DType dtype,
                   std::ostream &config) {
  std::vector<int64_t> shape = randomShape(rng, rank);
  c.source.push_back(sourceKey(rng, "a", dtype, shape));
  c.destination.push_back(destinationKey(rng, "b", dtype, shape));
  config << "a -> b\n";
  c.model["b"] = [](const std::string &, const Point &p) {
    return std::make_pair(std::string("a"), p);
  };
}

/// `a^T -> b`, or `a -> b` with permute (and, for PermuteCast, dtype).
void addPermuteCase(Rng &rng, Case &c, Kind kind, size_t rank, DType dtype,
                    std::ostream &config) {
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
}

/// Two or three keys concatenated along one axis.
void addConcatCase(Rng &rng, Case &c, size_t rank, DType dtype,
                   std::ostream &config) {
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
}

/// One key split into two or three along one axis.
void addSplitCase(Rng &rng, Case &c, size_t rank, DType dtype,
                  std::ostream &config) {
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
}

/// `a -> b, reshape=...` between a flattened and a blocked shape.
void addReshapeCase(Rng &rng, Case &c, DType dtype, std::ostream &config) {
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
}

/// A float key cast to float16, in place or renamed.
void addCastCase(Rng &rng, Case &c, size_t rank, DType dtype,
                 std::ostream &config) {
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
}

} // namespace

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
  case Kind::Rename:
    addRenameCase(rng, c, rank, dtype, config);
    break;
  case Kind::Transpose:
  case Kind::Permute:
  case Kind::PermuteCast:
    addPermuteCase(rng, c, kind, rank, dtype, config);
    break;
  case Kind::Concat:
    addConcatCase(rng, c, rank, dtype, config);
    break;
  case Kind::Split:
    addSplitCase(rng, c, rank, dtype, config);
    break;
  case Kind::Reshape:
    addReshapeCase(rng, c, dtype, config);
    break;
  case Kind::Cast:
    addCastCase(rng, c, rank, dtype, config);
    break;
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

} // namespace aoa::plan_resolution_test
