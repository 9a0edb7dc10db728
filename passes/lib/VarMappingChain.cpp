//===- VarMappingChain.cpp -------------------------------------------------===//
#include "aoa/passes/VarMappingChain.h"

#include "aoa/passes/KeySpace.h"

#include <algorithm>
#include <ostream>
#include <set>

namespace aoa {

namespace {
void addLink(std::map<std::string, std::vector<std::string>> &links,
             const std::string &from, const std::string &to) {
  if (from == to)
    return;
  std::vector<std::string> &targets = links[from];
  if (std::find(targets.begin(), targets.end(), to) == targets.end())
    targets.push_back(to);
}
} // namespace

void VarMappingChain::addStatement(const std::vector<std::string> &lhs,
                                   const std::vector<std::string> &rhs) {
  for (const std::string &from : lhs)
    for (const std::string &to : rhs) {
      addLink(forward_, from, to);
      addLink(backward_, to, from);
    }
}

std::optional<std::string> VarMappingChain::resolve(const std::string &name,
                                                    bool forward,
                                                    const KeySpace &side,
                                                    std::string &why) const {
  const auto &links = forward ? forward_ : backward_;
  std::set<std::string> seen;
  std::string current = name;
  for (;;) {
    if (side.contains(current))
      return current;
    if (!seen.insert(current).second) {
      why = "the statements that lead to '" + name + "' form a loop";
      return std::nullopt;
    }
    auto it = links.find(current);
    if (it == links.end() || it->second.empty())
      return current;
    if (it->second.size() > 1) {
      why = "'" + current + "' is " +
            (forward ? "consumed by several names" : "made from several names") +
            ", so its sharding is ambiguous";
      return std::nullopt;
    }
    current = it->second.front();
  }
}

void VarMappingChain::print(std::ostream &os) const {
  for (const auto &[from, targets] : forward_) {
    os << from << " =>";
    for (const std::string &to : targets)
      os << ' ' << to;
    os << '\n';
  }
}

} // namespace aoa
