//===- FusedLayout.cpp -----------------------------------------------------===//
#include "FusedLayout.h"

#include "MacroUtils.h"

namespace aoa {

FusedExpansion::FusedExpansion(CompilationState &state,
                               const Statement &statement, const char *pass,
                               size_t statementIndex)
    : state_(state), statement_(statement), pass_(pass), index_(statementIndex) {
  if (const Attribute *axis = statement.findAttribute("axis"))
    if (axis->isInteger())
      axis_ = axis->integer();
  tagLocation_ = statement.tags.empty() ? statement.location
                                        : statement.tags.front().location;
}

Name FusedExpansion::piece(const std::string &label) const {
  std::string prefix = pass_;
  // "lower-fused-ffn" -> "fused_ffn": the temporaries read like the tag.
  if (prefix.rfind("lower-", 0) == 0)
    prefix = prefix.substr(6);
  for (char &c : prefix)
    if (c == '-')
      c = '_';
  return makeName(prefix + "." + std::to_string(index_) + "." + label,
                  tagLocation_, true);
}

void FusedExpansion::emit(std::vector<Name> lhs, std::vector<Name> rhs,
                          std::vector<Statement> &out) const {
  Statement child = deriveStatement(statement_, pass_);
  child.lhs = std::move(lhs);
  child.rhs = std::move(rhs);
  child.attributes.push_back(makeIntegerAttribute("axis", axis_, tagLocation_));
  out.push_back(std::move(child));
}

std::optional<int64_t> FusedExpansion::shardCount(const Name &name, bool left) {
  const KeySpace &keys =
      left ? state_.keysOfLeftNames() : state_.keysOfRightNames();
  if (!keys.present())
    return 1; // no destination layout: one unsharded tensor
  std::string why;
  // Left names are read, so they are followed back to the keys they come
  // from; right names are written, so they are followed forward.
  std::optional<std::string> key =
      state_.chain.resolve(name.text, /*forward=*/!left, keys, why);
  if (!key) {
    reportAt(state_, statement_, name.location,
             "cannot tell how '" + name.text + "' is sharded: " + why)
        .hint("the fused macros read the tensor-parallel degree from the " +
              keys.sideName() + " metadata");
    return std::nullopt;
  }
  if (!keys.contains(*key)) {
    reportAt(state_, statement_, name.location,
             "cannot tell how '" + name.text + "' is sharded: '" + *key +
                 "' is not a " + keys.sideName() + " key and no statement "
                 "leads from it to one")
        .hint("the fused macros read the tensor-parallel degree from the " +
              keys.sideName() + " metadata");
    return std::nullopt;
  }
  std::optional<int64_t> count = keys.shardCountAlongAxis(*key, axis_, why);
  if (!count) {
    reportAt(state_, statement_, name.location,
             "cannot tell how '" + name.text + "' is sharded along axis " +
                 std::to_string(axis_) + ": " + why)
        .hint("the fused macros need the " + keys.sideName() +
              " shards to split the fused axis into equal parts");
    return std::nullopt;
  }
  return count;
}

std::optional<int64_t> FusedExpansion::leftShardCount(const Name &name) {
  return shardCount(name, true);
}

std::optional<int64_t> FusedExpansion::rightShardCount(const Name &name) {
  return shardCount(name, false);
}

bool FusedExpansion::checkDivisible(int64_t heads, const char *what,
                                    int64_t shards, const Name &name,
                                    const char *side) {
  if (heads % shards == 0)
    return true;
  reportAt(state_, statement_, name.location,
           std::string(what) + " (" + std::to_string(heads) +
               ") is not divisible by the " + std::to_string(shards) + " " +
               side + " shards of '" + name.text + "' along axis " +
               std::to_string(axis_))
      .hint("every tensor-parallel rank must hold whole heads; choose a "
            "degree that divides the head counts");
  return false;
}

} // namespace aoa
