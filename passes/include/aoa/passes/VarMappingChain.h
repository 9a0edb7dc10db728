//===- VarMappingChain.h - Name links between statements --------*- C++ -*-===//
//
// Fused macros need the shard count of names that are not keys (a temporary
// made by an earlier statement). The chain records, for every 1 -> n and
// n -> 1 statement, which names lead to which, so a name can be followed back
// to a source key or forward to a destination key (Paddle's
// get_var_mapping_chain_macro). Unlike Paddle, a name feeding several
// statements keeps all its links, and self links (`s -> s, dtype=...`) are
// not recorded.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_VARMAPPINGCHAIN_H
#define AOA_PASSES_VARMAPPINGCHAIN_H

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aoa {

class KeySpace;

class VarMappingChain {
public:
  /// Records the links of one statement.
  void addStatement(const std::vector<std::string> &lhs,
                    const std::vector<std::string> &rhs);

  /// Follows links from `name` until a name of `side` is reached. Walking
  /// backward follows producers, forward follows consumers. Returns the name
  /// reached, or nullopt with `why` set when the walk is ambiguous (several
  /// links) or loops.
  std::optional<std::string> resolve(const std::string &name, bool forward,
                                     const KeySpace &side,
                                     std::string &why) const;

  void print(std::ostream &os) const;

private:
  std::map<std::string, std::vector<std::string>> forward_;
  std::map<std::string, std::vector<std::string>> backward_;
};

} // namespace aoa

#endif // AOA_PASSES_VARMAPPINGCHAIN_H
