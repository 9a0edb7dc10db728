//===- OptimizerState.h - Optimizer-state key suffixes ----------*- C++ -*-===//
//
// Optimizer states are stored as `<model key><suffix>`; statements speak of
// model keys and the states follow them. Suffixes are tested in this order
// (Paddle's order): .w_0 .moment1_0 .moment2_0 .beta1_pow_acc_0
// .beta2_pow_acc_0.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_OPTIMIZERSTATE_H
#define AOA_IR_OPTIMIZERSTATE_H

#include <string_view>
#include <utility>

namespace aoa {

constexpr std::string_view kOptimizerSuffixes[] = {
    ".w_0", ".moment1_0", ".moment2_0", ".beta1_pow_acc_0", ".beta2_pow_acc_0"};

/// Splits `key` into (model key, suffix); the suffix is empty for a model key.
std::pair<std::string_view, std::string_view>
splitOptimizerSuffix(std::string_view key);

/// The beta-pow accumulators are scalars that any source of the model key
/// can provide.
bool isBetaPowSuffix(std::string_view suffix);

} // namespace aoa

#endif // AOA_IR_OPTIMIZERSTATE_H
