//===- ExpandIds.cpp - $LAYER_ID_OFFSET, $LAYER_ID, $EXPERT_ID -------------===//
//
// A statement whose names contain placeholders is a template: it is matched
// against the keys of one side and expanded once per id combination that
// exists there. Unlike Paddle, combinations that do not exist are never
// generated (no cartesian product), the digits are kept as written (`01`
// stays `01`), a placeholder repeated in one name must match the same
// digits, and a template that matches nothing is an error.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "MacroUtils.h"
#include "aoa/passes/CompilationState.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>

namespace aoa {

namespace {

constexpr std::string_view kLayerIdOffset = "$LAYER_ID_OFFSET";
constexpr std::string_view kLayerId = "$LAYER_ID";
constexpr std::string_view kExpertId = "$EXPERT_ID";

struct Segment {
  bool placeholder;
  std::string text; ///< literal text, or the placeholder spelling
};

/// Splits a name into literals and placeholders. Returns false and sets
/// `unknown` for a `$` that starts no known placeholder.
bool parseTemplate(std::string_view name, std::vector<Segment> &segments,
                   std::string &unknown) {
  segments.clear();
  std::string literal;
  size_t i = 0;
  while (i < name.size()) {
    if (name[i] != '$') {
      literal += name[i++];
      continue;
    }
    std::string_view rest = name.substr(i);
    std::string_view found;
    for (std::string_view p : {kLayerIdOffset, kLayerId, kExpertId})
      if (rest.substr(0, p.size()) == p) {
        found = p;
        break;
      }
    if (found.empty()) {
      size_t end = i + 1;
      while (end < name.size() &&
             (std::isalnum(static_cast<unsigned char>(name[end])) ||
              name[end] == '_'))
        ++end;
      unknown = std::string(name.substr(i, end - i));
      return false;
    }
    if (!literal.empty())
      segments.push_back({false, std::move(literal)});
    literal.clear();
    segments.push_back({true, std::string(found)});
    i += found.size();
  }
  if (!literal.empty())
    segments.push_back({false, std::move(literal)});
  return true;
}

bool hasPlaceholder(const std::vector<Segment> &segments) {
  return std::any_of(segments.begin(), segments.end(),
                     [](const Segment &s) { return s.placeholder; });
}

using Captures = std::map<std::string, std::string>;

bool matchFrom(const std::vector<Segment> &segments, size_t index,
               std::string_view key, size_t pos, Captures &captures) {
  if (index == segments.size())
    return pos == key.size();
  const Segment &segment = segments[index];
  if (!segment.placeholder) {
    if (key.substr(pos, segment.text.size()) != segment.text)
      return false;
    return matchFrom(segments, index + 1, key, pos + segment.text.size(),
                     captures);
  }
  auto existing = captures.find(segment.text);
  if (existing != captures.end()) {
    const std::string &digits = existing->second;
    return key.substr(pos, digits.size()) == digits &&
           matchFrom(segments, index + 1, key, pos + digits.size(), captures);
  }
  for (size_t end = pos + 1; end <= key.size() && std::isdigit(static_cast<unsigned char>(key[end - 1])); ++end) {
    captures[segment.text] = std::string(key.substr(pos, end - pos));
    if (matchFrom(segments, index + 1, key, end, captures))
      return true;
  }
  captures.erase(segment.text);
  return false;
}

std::string substitute(const std::vector<Segment> &segments,
                       const Captures &values) {
  std::string out;
  for (const Segment &segment : segments)
    out += segment.placeholder ? values.at(segment.text) : segment.text;
  return out;
}

/// The name a template statement is expanded from, and where it is.
struct Template {
  const Name *name = nullptr;
  bool onLeft = true;
  std::vector<Segment> segments;
  std::set<std::string> placeholders;
};

std::set<std::string> placeholdersOf(const std::vector<Segment> &segments) {
  std::set<std::string> used;
  for (const Segment &s : segments)
    if (s.placeholder)
      used.insert(s.text);
  return used;
}

class ExpandIdsPass : public Pass {
public:
  const char *name() const override { return "expand-ids"; }
  const char *description() const override {
    return "expand $LAYER_ID_OFFSET, $LAYER_ID and $EXPERT_ID templates";
  }
  bool run(CompilationState &state) override;
  void print(const CompilationState &state, std::ostream &os) const override {
    printStatements(state, os);
  }

private:
  /// Appends the statements `statement` expands to; one that no id
  /// applies to is moved over as it is.
  bool expand(CompilationState &state, Statement &statement,
              bool offsetMacro, std::vector<Statement> &out);
};

/// The template of a statement: the first placeholder name on the side whose
/// keys come from --src (left in forward mode, right in reverse mode), else
/// the first on the other side.
const Name *chooseTemplate(const Statement &statement, bool reverse,
                           bool &onLeft) {
  auto firstIn = [](const std::vector<Name> &names) -> const Name * {
    for (const Name &name : names)
      if (!name.quoted && !name.temporary &&
          name.text.find('$') != std::string::npos)
        return &name;
    return nullptr;
  };
  const std::vector<Name> &preferred = reverse ? statement.rhs : statement.lhs;
  const std::vector<Name> &other = reverse ? statement.lhs : statement.rhs;
  if (const Name *found = firstIn(preferred)) {
    onLeft = !reverse;
    return found;
  }
  onLeft = reverse;
  return firstIn(other);
}

/// Parses every name of `statement`; sets `applies` when this macro (the
/// offset one or the plain one) has a placeholder to expand.
bool parseNames(CompilationState &state, const Statement &statement,
                bool offsetMacro, bool &applies) {
  applies = false;
  for (const std::vector<Name> *side : {&statement.lhs, &statement.rhs})
    for (const Name &name : *side) {
      if (name.quoted || name.temporary)
        continue;
      std::vector<Segment> segments;
      std::string unknown;
      if (!parseTemplate(name.text, segments, unknown)) {
        reportAt(state, statement, name.location,
                 "unknown placeholder '" + unknown + "' in '" + name.text + "'")
            .hint("placeholders are $LAYER_ID, $EXPERT_ID and $LAYER_ID_OFFSET");
        return false;
      }
      bool offset = name.text.find(kLayerIdOffset) != std::string::npos;
      applies |= offsetMacro ? offset : hasPlaceholder(segments);
    }
  return true;
}

/// The template name of a statement whose names all parsed.
Template findTemplate(const Statement &statement, bool reverse,
                      bool offsetMacro) {
  Template found;
  found.name = chooseTemplate(statement, reverse, found.onLeft);
  if (offsetMacro) {
    // The template is the first name with the offset tag.
    for (const std::vector<Name> *side : {&statement.lhs, &statement.rhs})
      for (const Name &name : *side)
        if (!name.quoted &&
            name.text.find(kLayerIdOffset) != std::string::npos &&
            (found.name == nullptr ||
             found.name->text.find(kLayerIdOffset) == std::string::npos)) {
          found.name = &name;
          found.onLeft = side == &statement.lhs;
        }
  }
  std::string unknown;
  parseTemplate(found.name->text, found.segments, unknown);
  found.placeholders = placeholdersOf(found.segments);
  return found;
}

/// Every other name must use exactly the template's placeholders, so that
/// each expansion names distinct keys.
bool checkSamePlaceholders(CompilationState &state, const Statement &statement,
                           const Template &tmpl) {
  for (const std::vector<Name> *side : {&statement.lhs, &statement.rhs})
    for (const Name &name : *side) {
      if (name.isPlaceholder() || name.temporary)
        continue;
      std::vector<Segment> segments;
      std::string unknown;
      parseTemplate(name.text, segments, unknown);
      std::set<std::string> used =
          name.quoted ? std::set<std::string>() : placeholdersOf(segments);
      if (used == tmpl.placeholders)
        continue;
      std::string list;
      for (const std::string &p : tmpl.placeholders)
        list += (list.empty() ? "" : ", ") + p;
      reportAt(state, statement, name.location,
               "'" + name.text + "' must use the same placeholders as the "
               "template '" + tmpl.name->text + "' (" + list + ")")
          .hint("every name of a template statement is expanded with the "
                "same ids; write the placeholders in each name");
      return false;
    }
  return true;
}

/// The id combinations that exist among `keys`, in Paddle's order: by
/// placeholder name (EXPERT_ID before LAYER_ID), each by numeric value.
std::vector<Captures> idCombinations(const Template &tmpl,
                                     const KeySpace &keys) {
  std::string prefix = tmpl.segments.front().placeholder
                           ? std::string()
                           : tmpl.segments.front().text;
  // A key that does not end with the template's last literal cannot match:
  // checked first, most keys of a large model are rejected without a
  // capture.
  std::string_view suffix = tmpl.segments.back().placeholder
                                ? std::string_view()
                                : std::string_view(tmpl.segments.back().text);
  auto [begin, end] = keysWithPrefix(keys.names(), prefix);
  std::vector<Captures> ordered;
  Captures captures;
  for (auto it = begin; it != end; ++it) {
    std::string_view key = *it;
    if (key.size() < suffix.size() ||
        key.substr(key.size() - suffix.size()) != suffix)
      continue;
    captures.clear();
    if (matchFrom(tmpl.segments, 0, key, 0, captures))
      ordered.push_back(captures);
  }
  // Sorted once in the final order, in which only equal combinations are
  // equivalent, then repeats dropped (a std::set of them compared maps of
  // strings at every insertion: half the pass).
  std::sort(ordered.begin(), ordered.end(),
            [](const Captures &a, const Captures &b) {
              for (auto ia = a.begin(), ib = b.begin(); ia != a.end();
                   ++ia, ++ib) {
                int64_t va = digitsValue(ia->second);
                int64_t vb = digitsValue(ib->second);
                if (va != vb)
                  return va < vb;
                if (ia->second != ib->second)
                  return ia->second < ib->second;
              }
              return false;
            });
  ordered.erase(std::unique(ordered.begin(), ordered.end()), ordered.end());
  return ordered;
}

/// The names of one side of a template statement, parsed once for all its
/// expansions.
class NameTemplates {
public:
  explicit NameTemplates(const std::vector<Name> &names) : names_(names) {
    for (const Name &name : names) {
      segments_.emplace_back();
      if (expands(name)) {
        std::string unknown;
        parseTemplate(name.text, segments_.back(), unknown);
      }
    }
  }

  /// The names with their placeholders replaced by `values`.
  std::vector<Name> substitute(const Captures &values) const {
    std::vector<Name> result;
    result.reserve(names_.size());
    for (size_t i = 0; i < names_.size(); ++i) {
      result.push_back(names_[i]);
      if (expands(names_[i]))
        result.back().text = aoa::substitute(segments_[i], values);
    }
    return result;
  }

private:
  static bool expands(const Name &name) {
    return !name.quoted && !name.temporary && !name.isPlaceholder();
  }

  const std::vector<Name> &names_;
  std::vector<std::vector<Segment>> segments_;
};

bool ExpandIdsPass::expand(CompilationState &state, Statement &statement,
                           bool offsetMacro, std::vector<Statement> &out) {
  bool applies = false;
  if (!parseNames(state, statement, offsetMacro, applies))
    return false;
  if (!applies) {
    out.push_back(std::move(statement));
    return true;
  }
  Template tmpl = findTemplate(statement, state.program.reverse, offsetMacro);
  const KeySpace &keys =
      tmpl.onLeft ? state.keysOfLeftNames() : state.keysOfRightNames();
  if (!keys.present()) {
    reportAt(state, statement, tmpl.name->location,
             "template '" + tmpl.name->text + "' needs the keys of the " +
                 (state.program.reverse ? "source" : "destination") +
                 " side, but no destination layout was given")
        .hint("pass --dst, or put the template on the side of the source keys");
    return false;
  }
  if (offsetMacro && tmpl.placeholders.size() > 1) {
    reportAt(state, statement, tmpl.name->location,
             "$LAYER_ID_OFFSET cannot be combined with other placeholders in '" +
                 tmpl.name->text + "'");
    return false;
  }
  if (!checkSamePlaceholders(state, statement, tmpl))
    return false;

  std::vector<Captures> combinations = idCombinations(tmpl, keys);
  if (combinations.empty()) {
    reportAt(state, statement, tmpl.name->location,
             "template '" + tmpl.name->text + "' matches no " +
                 keys.sideName() + " key")
        .hint("placeholders match decimal ids; check the spelling against the " +
              keys.sideName() + " metadata");
    return false;
  }
  NameTemplates lhs(statement.lhs), rhs(statement.rhs);
  SharedString printed(printStatement(statement));
  for (const Captures &combo : combinations) {
    Captures otherSide = combo;
    if (offsetMacro) {
      // The names across the arrow from the template get the previous layer
      // (forward: the source layer L feeds destination layer L - 1).
      int64_t layer = digitsValue(combo.at(std::string(kLayerIdOffset)));
      int64_t shifted = tmpl.onLeft ? layer - 1 : layer + 1;
      if (shifted < 0) {
        reportAt(state, statement, tmpl.name->location,
                 "layer " + std::to_string(layer) + " matched by '" +
                     tmpl.name->text + "' has no previous layer")
            .hint("$LAYER_ID_OFFSET maps layer L on the left to layer L-1 on "
                  "the right; the left keys must start at layer 1");
        return false;
      }
      otherSide[std::string(kLayerIdOffset)] = std::to_string(shifted);
    }
    Statement child = deriveStatement(statement, name(), printed);
    child.tags = statement.tags;
    child.attributes = statement.attributes;
    child.lhs = lhs.substitute(tmpl.onLeft ? combo : otherSide);
    child.rhs = rhs.substitute(tmpl.onLeft ? otherSide : combo);
    out.push_back(std::move(child));
  }
  return true;
}

bool ExpandIdsPass::run(CompilationState &state) {
  bool ok = true;
  for (bool offsetMacro : {true, false}) {
    std::vector<Statement> out;
    for (Statement &statement : state.program.statements)
      ok &= expand(state, statement, offsetMacro, out);
    state.program.statements = std::move(out);
    if (!ok)
      return false;
  }
  return true;
}

} // namespace

std::unique_ptr<Pass> createExpandIdsPass() {
  return std::make_unique<ExpandIdsPass>();
}

} // namespace aoa
