//===- AxisTrace.cpp
//-------------------------------------------------------===//
#include "aoa/passes/AxisTrace.h"

#include "aoa/ir/Permutation.h"

namespace aoa {

AxisStep reverseAllAxes(SourceLocation location) {
  AxisStep step;
  step.kind = AxisStep::Kind::Permute;
  step.permutation = "[]";
  step.location = location;
  return step;
}

namespace {

/// A permutation's result axis i is its input axis P[i]; undoing it applies
/// the inverse.
bool permute(std::vector<AxisOrigin> &axes, const ChainWalk::Step &s,
             AxisTraceError &error) {
  std::string why;
  std::optional<Permutation> p =
      Permutation::parse(s.step.permutation, axes.size(), &why);
  if (!p) {
    error = {"cannot follow the permutation: " + why, s.step.location};
    return false;
  }
  Permutation applied = s.undone ? p->inverse() : *p;
  std::vector<AxisOrigin> next;
  for (size_t i = 0; i < applied.rank(); ++i)
    next.push_back(axes[applied[i]]);
  axes = std::move(next);
  return true;
}

AxisOrigin merged(const std::vector<AxisOrigin> &axes, size_t begin,
                  size_t end) {
  AxisOrigin out;
  for (size_t i = begin; i < end; ++i) {
    if (axes[i].cutBy)
      return axes[i]; // a cut axis stays cut inside a merge
    out.keyAxes.insert(out.keyAxes.end(), axes[i].keyAxes.begin(),
                       axes[i].keyAxes.end());
  }
  return out;
}

/// A reshape converts between canonical (c0, c1, r...) and flattened
/// (c0*c1, prod r). Whichever way the walk meets it, the side of rank k has
/// the canonical axes: from there the flattened axes merge them, and from
/// the flattened side the canonical axes are cut out of them.
bool reshape(std::vector<AxisOrigin> &axes, const ChainWalk::Step &s,
             AxisTraceError &error) {
  size_t k = s.step.canonicalShape.size();
  if (k >= 3 && axes.size() == k) {
    axes = {merged(axes, 0, 2), merged(axes, 2, k)};
    return true;
  }
  if (k >= 3 && axes.size() == 2) {
    AxisOrigin cut;
    cut.cutBy = s.step.location;
    axes.assign(k, cut);
    return true;
  }
  error = {"cannot follow the reshape: a tensor of rank " +
               std::to_string(axes.size()) + " is neither side of it",
           s.step.location};
  return false;
}

} // namespace

std::optional<std::vector<AxisOrigin>>
traceAxes(const ChainWalk &walk, size_t keyRank, AxisTraceError &error) {
  std::vector<AxisOrigin> axes(keyRank);
  for (unsigned i = 0; i < keyRank; ++i)
    axes[i].keyAxes = {i};
  for (const ChainWalk::Step &s : walk.steps) {
    bool ok = s.step.kind == AxisStep::Kind::Permute ? permute(axes, s, error)
                                                     : reshape(axes, s, error);
    if (!ok)
      return std::nullopt;
  }
  return axes;
}

std::string describeKeyAxes(const std::vector<unsigned> &axes,
                            const std::string &key) {
  std::string list;
  for (size_t i = 0; i < axes.size(); ++i)
    list += (i == 0                 ? ""
             : i + 1 == axes.size() ? " and "
                                    : ", ") +
            std::to_string(axes[i]);
  return (axes.size() == 1 ? "axis " : "axes ") + list + " of '" + key + "'";
}

} // namespace aoa
