//===- VarMappingChain.cpp -------------------------------------------------===//
#include "aoa/passes/VarMappingChain.h"

#include "aoa/passes/KeySpace.h"

#include <algorithm>
#include <ostream>
#include <set>

namespace aoa {

void VarMappingChain::addStatement(
    const std::vector<ChainName> &lhs,
    const std::vector<std::vector<AxisStep>> &steps,
    const std::vector<ChainName> &rhs) {
  for (size_t i = 0; i < lhs.size(); ++i)
    for (const ChainName &to : rhs) {
      const std::vector<AxisStep> &linkSteps = steps[i];
      if (lhs[i] == to) {
        if (!linkSteps.empty())
          changedInPlace_.emplace(to, linkSteps.front().location);
        continue;
      }
      // A name split into n parts has n links: finding a repeated link by
      // a scan of them would make `y -> x[0:n]` quadratic.
      if (!linked_.emplace(lhs[i], to).second)
        continue;
      forward_[lhs[i]].push_back({to, linkSteps});
      backward_[to].push_back({lhs[i], linkSteps});
    }
}

void VarMappingChain::addDerivedName(const ChainName &derived,
                                     const ChainName &from,
                                     std::vector<AxisStep> steps,
                                     std::string spelling) {
  backward_[derived] = {Link{from, std::move(steps)}};
  derivedSpellings_[derived] = std::move(spelling);
}

std::string VarMappingChain::spelling(const ChainName &name) const {
  auto it = derivedSpellings_.find(name);
  return it != derivedSpellings_.end() ? it->second : name.spelling();
}

std::optional<ChainWalk> VarMappingChain::resolve(const ChainName &name,
                                                  bool forward,
                                                  const KeySpace &side,
                                                  std::string &why) const {
  // Most names a fused macro asks about are keys themselves: no walk.
  if (!name.temporary && side.contains(name.text) &&
      !changedInPlace_.count(name))
    return ChainWalk{name, {}};
  const Links &links = forward ? forward_ : backward_;
  std::set<ChainName> seen;
  // The links taken, from `name` on; reversed at the end so the walk's steps
  // start at the name reached.
  std::vector<const Link *> taken;
  ChainName current = name;
  for (;;) {
    if (!current.temporary && side.contains(current.text))
      break;
    if (!seen.insert(current).second) {
      why = "the statements that lead to '" + spelling(name) +
            "' form a loop";
      return std::nullopt;
    }
    auto it = links.find(current);
    if (it == links.end() || it->second.empty())
      break;
    if (it->second.size() > 1) {
      why = "'" + spelling(current) + "' is " +
            (forward ? "consumed by several names" : "made from several names") +
            ", so its sharding is ambiguous";
      return std::nullopt;
    }
    taken.push_back(&it->second.front());
    current = it->second.front().to;
  }
  seen.insert(current);
  for (const ChainName &visited : seen)
    if (changedInPlace_.count(visited)) {
      why = "'" + visited.spelling() + "' is permuted or reshaped in place "
            "(`" + visited.spelling() + " -> " + visited.spelling() +
            ", ...`), so which of its axes the fused axis is depends on "
            "statement order";
      return std::nullopt;
    }
  ChainWalk walk{current, {}};
  // Backward, a link goes from its producer (nearer the key) to the name we
  // came from: its steps run forward. Forward, the key is the link's result:
  // going back towards the start undoes its steps, last first.
  for (auto link = taken.rbegin(); link != taken.rend(); ++link) {
    if (!forward) {
      for (const AxisStep &step : (*link)->steps)
        walk.steps.push_back({step, false});
      continue;
    }
    for (auto step = (*link)->steps.rbegin(); step != (*link)->steps.rend();
         ++step)
      walk.steps.push_back({*step, true});
  }
  return walk;
}

void VarMappingChain::print(std::ostream &os) const {
  for (const auto &[from, targets] : forward_) {
    os << from.spelling() << " =>";
    for (const Link &to : targets)
      os << ' ' << to.to.spelling();
    os << '\n';
  }
}

} // namespace aoa
