//===- OptimizerState.cpp --------------------------------------------------===//
#include "aoa/ir/OptimizerState.h"

namespace aoa {

std::pair<std::string_view, std::string_view>
splitOptimizerSuffix(std::string_view key) {
  for (std::string_view suffix : kOptimizerSuffixes)
    if (key.size() > suffix.size() &&
        key.substr(key.size() - suffix.size()) == suffix)
      return {key.substr(0, key.size() - suffix.size()),
              key.substr(key.size() - suffix.size())};
  return {key, {}};
}

bool isBetaPowSuffix(std::string_view suffix) {
  return suffix == ".beta1_pow_acc_0" || suffix == ".beta2_pow_acc_0";
}

} // namespace aoa
