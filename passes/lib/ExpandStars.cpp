//===- ExpandStars.cpp - `*` in names --------------------------------------===//
//
// `experts.*.weight` stands for every key of its side that matches with a
// decimal id in place of `*` (full match), ordered by that id. Names left of
// `->` match the keys the statements read from, names right of it the keys
// they write. A star that matches nothing is an error (Paddle drops it).
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "MacroUtils.h"
#include "aoa/passes/CompilationState.h"

#include <algorithm>

namespace aoa {

namespace {

class ExpandStarsPass : public Pass {
public:
  const char *name() const override { return "expand-stars"; }
  const char *description() const override {
    return "expand `*` in names into the matching keys";
  }
  bool run(CompilationState &state) override;
  void print(const CompilationState &state, std::ostream &os) const override {
    printStatements(state, os);
  }

private:
  bool expandSide(CompilationState &state, const Statement &statement,
                  const std::vector<Name> &names, const KeySpace &keys,
                  std::vector<Name> &out);
};

bool isStarName(const Name &name) {
  return !name.quoted && !name.temporary &&
         name.text.find('*') != std::string::npos;
}

bool ExpandStarsPass::expandSide(CompilationState &state,
                                 const Statement &statement,
                                 const std::vector<Name> &names,
                                 const KeySpace &keys, std::vector<Name> &out) {
  for (const Name &name : names) {
    if (!isStarName(name)) {
      out.push_back(name);
      continue;
    }
    size_t star = name.text.find('*');
    if (name.text.find('*', star + 1) != std::string::npos) {
      reportAt(state, statement, name.location,
               "'" + name.text + "' has more than one '*'")
          .hint("a name takes one '*'; use $LAYER_ID / $EXPERT_ID for several "
                "ids");
      return false;
    }
    if (!keys.present()) {
      reportAt(state, statement, name.location,
               "'" + name.text + "' needs the destination keys, but no "
               "destination layout was given")
          .hint("pass --dst, or list the names");
      return false;
    }
    std::string_view prefix(name.text.data(), star);
    std::string_view suffix = std::string_view(name.text).substr(star + 1);
    std::vector<std::pair<int64_t, std::string>> matches;
    auto [begin, end] = keysWithPrefix(keys.names(), prefix);
    for (auto it = begin; it != end; ++it) {
      std::string_view key = *it;
      if (key.size() <= prefix.size() + suffix.size() ||
          key.substr(key.size() - suffix.size()) != suffix)
        continue;
      std::string_view id = key.substr(
          prefix.size(), key.size() - prefix.size() - suffix.size());
      if (isDigits(id))
        matches.emplace_back(digitsValue(id), *it);
    }
    if (matches.empty()) {
      reportAt(state, statement, name.location,
               "'" + name.text + "' matches no " + keys.sideName() + " key")
          .hint("'*' stands for a decimal id; check the spelling against the " +
                keys.sideName() + " metadata");
      return false;
    }
    std::stable_sort(matches.begin(), matches.end());
    for (auto &[id, key] : matches) {
      Name element = name;
      element.text = key;
      out.push_back(std::move(element));
    }
  }
  return true;
}

bool ExpandStarsPass::run(CompilationState &state) {
  bool ok = true;
  for (Statement &statement : state.program.statements) {
    bool hasStar = false;
    for (const std::vector<Name> *side : {&statement.lhs, &statement.rhs})
      hasStar |= std::any_of(side->begin(), side->end(), isStarName);
    if (!hasStar)
      continue;
    Statement child = deriveStatement(statement, name());
    child.tags = statement.tags;
    child.attributes = statement.attributes;
    if (!expandSide(state, statement, statement.lhs, state.keysOfLeftNames(),
                    child.lhs) ||
        !expandSide(state, statement, statement.rhs, state.keysOfRightNames(),
                    child.rhs)) {
      ok = false;
      continue;
    }
    if (child.lhs.size() > 1 && child.rhs.size() > 1) {
      reportAt(state, child, child.arrowLocation,
               "after expanding '*' the statement maps " +
                   std::to_string(child.lhs.size()) + " names to " +
                   std::to_string(child.rhs.size()) + " names")
          .hint("a statement is 1 -> 1, 1 -> n or n -> 1; use $EXPERT_ID or "
                "$LAYER_ID to write one statement per id");
      ok = false;
      continue;
    }
    statement = std::move(child);
  }
  return ok;
}

} // namespace

std::unique_ptr<Pass> createExpandStarsPass() {
  return std::make_unique<ExpandStarsPass>();
}

} // namespace aoa
