//===- LayoutSpecKeyList.cpp - Placing a key list -------------------------===//
//
// Every key of the key list is placed by, in this order: its `tensors`
// entry; its model key's placement, when it is an optimizer state of a key
// in the list; the first rule whose pattern matches it; the default. A rule
// that captures `$LAYER_ID` (`$EXPERT_ID`) and a spec with "stages"
// ("experts") puts the key on the slice of that axis whose range of ids
// holds the captured one. Keys are matched first, so that the number of
// layers can be counted, then placed in the key list's order.
//
//===----------------------------------------------------------------------===//
#include "LayoutSpecParser.h"
#include "LayoutSpecStrings.h"
#include "aoa/ir/OptimizerState.h"

namespace aoa {

namespace layoutspec {

namespace {

/// At most this many keys are named in one message.
constexpr size_t kMaxKeysShown = 8;

std::string listKeys(llvm::ArrayRef<std::string_view> keys, size_t total) {
  std::string out;
  for (size_t i = 0; i < keys.size() && i < kMaxKeysShown; ++i)
    out += (i ? ", " : "") + quoteText(keys[i]);
  if (total > kMaxKeysShown)
    out += " and " + std::to_string(total - kMaxKeysShown) + " more";
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Placing the key list
//===----------------------------------------------------------------------===//

void LayoutSpecParser::placeKeyList() {
  std::vector<bool> emitted(listed_.size(), false);
  if (keys_) {
    // Unmatched keys and rules that place nothing are reported, and the
    // other keys still placed, so that one run shows every problem.
    if (!matchKeys())
      return;
    reportUnplacedRules();
    unsigned errors = errorCount();
    finishIdAxes();
    if (errorCount() != errors)
      return;
    placementFailed_.assign(keys_->keys.size(), false);
    builder_.reserve(keys_->keys.size() * (1 + optimizerSuffixes_.size()), 0,
                     0);
    for (size_t i = 0; i < keys_->keys.size(); ++i) {
      if (stopForErrors())
        return;
      const LayoutKey &key = keys_->keys[i];
      const KeySource &source = keySources_[i];
      if (source.kind == KeySource::Unmatched)
        continue;
      if (source.kind == KeySource::Listed) {
        const ListedTensor &listed = listed_[source.index];
        emitted[source.index] = true;
        At at(*this, listed.path);
        addPlacedTensor(listed.key, listed.dtype, listed.globalShape,
                        listed.placement);
        continue;
      }
      if (std::optional<KeyPlacement> placement =
              placementOf(i, key.globalShape, "key " + quoteText(key.key)))
        addPlacedTensor(key.key, key.dtype, key.globalShape, *placement);
    }
    reportQuietFailures();
  }
  // `tensors` entries for keys the key list does not have, in spec order.
  for (size_t i = 0; i < listed_.size(); ++i) {
    if (emitted[i])
      continue;
    if (stopForErrors())
      return;
    At at(*this, listed_[i].path);
    addPlacedTensor(listed_[i].key, listed_[i].dtype, listed_[i].globalShape,
                    listed_[i].placement);
  }
}

bool LayoutSpecParser::matchKeys() {
  const std::vector<LayoutKey> &keys = keys_->keys;
  keySources_.assign(keys.size(), KeySource{});
  if (keyIndex_.size() != keys.size()) {
    // Key lists come from metadata or statements, which cannot repeat a
    // key; a caller's list still might.
    std::unordered_set<std::string_view> seen;
    for (const LayoutKey &key : keys)
      if (!seen.insert(key.key).second) {
        diags_
            .error(SourceLocation{}, "key " + quoteText(key.key) +
                                         " appears twice in " + keys_->origin)
            .hint("a key list names each key once");
        return false;
      }
  }
  std::vector<size_t> unmatched;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string &key = keys[i].key;
    KeySource &source = keySources_[i];
    if (auto listed = listedIndex_.find(key); listed != listedIndex_.end()) {
      source.kind = KeySource::Listed;
      source.index = listed->second;
      continue;
    }
    // An optimizer state goes where its model key goes.
    auto [model, suffix] = splitOptimizerSuffix(key);
    if (!suffix.empty() && splitOptimizerSuffix(model).second.empty())
      if (auto found = keyIndex_.find(model); found != keyIndex_.end()) {
        source.kind = KeySource::StateOf;
        source.index = found->second;
        continue;
      }
    for (size_t r = 0; r < rules_.size(); ++r)
      if (rules_[r].pattern->match(key, &source.captures)) {
        source.kind = KeySource::RuleMatch;
        source.index = r;
        break;
      }
    if (source.kind == KeySource::Unmatched && default_) {
      source.kind = KeySource::RuleMatch;
      source.index = rules_.size();
    }
    if (source.kind == KeySource::RuleMatch)
      ++(source.index < rules_.size() ? rules_[source.index] : *default_)
            .placed;
    else
      unmatched.push_back(i);
  }
  if (!unmatched.empty())
    reportUnmatchedKeys(unmatched);
  return true;
}

void LayoutSpecParser::reportUnmatchedKeys(llvm::ArrayRef<size_t> unmatched) {
  std::vector<std::string_view> shown;
  for (size_t i = 0; i < unmatched.size() && i < kMaxKeysShown; ++i)
    shown.push_back(keys_->keys[unmatched[i]].key);
  const char *anchor = !rules_.empty() ? "rules" : "tensors";
  At at(*this, {JsonPathStep::member(anchor)});
  errorAtKey(std::to_string(unmatched.size()) +
             (unmatched.size() == 1 ? " key" : " keys") + " of " +
             keys_->origin + (unmatched.size() == 1 ? " is" : " are") +
             " placed by no rule: " + listKeys(shown, unmatched.size()))
      .hint("add a rule that matches " +
            std::string(unmatched.size() == 1 ? "it" : "them") +
            ", or a \"default\" placement such as {\"replicate\": true}");
}

void LayoutSpecParser::reportUnplacedRules() {
  for (size_t r = 0; r < rules_.size(); ++r) {
    const Rule &rule = rules_[r];
    if (rule.placed != 0 || rule.optional)
      continue;
    // Say which earlier placement took the keys it matches, if any.
    std::string takenBy;
    std::string_view example;
    for (size_t i = 0; i < keys_->keys.size() && takenBy.empty(); ++i) {
      if (!rule.pattern->match(keys_->keys[i].key))
        continue;
      const KeySource &source = keySources_[i];
      example = keys_->keys[i].key;
      takenBy =
          source.kind == KeySource::Listed ? "its 'tensors' entry"
          : source.kind == KeySource::StateOf
              ? "its model key " + quoteText(keys_->keys[source.index].key)
              : ruleAt(source.index).name;
    }
    At at(*this, rule.spec.path);
    Enter enter(*this, JsonPathStep::member(rule.patternField));
    if (takenBy.empty())
      error(rule.name + " matches no key of " + keys_->origin)
          .hint("check the pattern (it matches whole keys), or mark the rule "
                "\"optional\": true");
    else
      error(rule.name +
            " places no key: the keys it matches are placed "
            "before it, e.g. " +
            quoteText(example) + " by " + takenBy)
          .hint("move the rule before the one that shadows it, or remove it");
  }
}

void LayoutSpecParser::finishIdAxes() {
  if (stages_)
    finishIdAxis(*stages_, true);
  if (experts_)
    finishIdAxis(*experts_, false);
}

void LayoutSpecParser::finishIdAxis(IdAxis &ids, bool layers) {
  bool used = false;
  int64_t largest = -1;
  for (size_t r = 0; r <= rules_.size(); ++r) {
    if (r == rules_.size() && !default_)
      break;
    const Rule &rule = ruleAt(r);
    used = used || (layers ? rule.stageAxis : rule.expertAxis).has_value();
  }
  if (!used) {
    At at(*this, {JsonPathStep::member(ids.field)});
    errorAtKey(std::string("'") + ids.field + "' places " + ids.placeholder +
               ", but no rule captures it")
        .hint(std::string("write ") + ids.placeholder +
              " where the id is in the rules' patterns, e.g. "
              "\"model.layers.$LAYER_ID.*\"");
    return;
  }
  for (size_t i = 0; i < keySources_.size(); ++i) {
    const KeySource &source = keySources_[i];
    if (source.kind != KeySource::RuleMatch)
      continue;
    const std::optional<int64_t> &id =
        layers ? source.captures.layerId : source.captures.expertId;
    if (id && (layers ? ruleAt(source.index).stageAxis
                      : ruleAt(source.index).expertAxis))
      largest = std::max(largest, *id);
  }
  ids.ids = ids.ranges  ? ids.ranges->count()
            : ids.count ? *ids.count
                        : largest + 1;
  for (size_t r = 0; r <= rules_.size(); ++r) {
    if (r == rules_.size() && !default_)
      break;
    Rule &rule = r < rules_.size() ? rules_[r] : *default_;
    std::optional<unsigned> axis = layers ? rule.stageAxis : rule.expertAxis;
    if (!axis)
      continue;
    (layers ? rule.stagePartition : rule.expertPartition) =
        ids.ranges
            ? *ids.ranges
            : IdPartition::even(ids.ids, rule.spec.mesh().shape()[*axis]);
  }
}

std::optional<KeyPlacement>
LayoutSpecParser::placementOf(size_t index, llvm::ArrayRef<int64_t> shape,
                              const std::string &keyContext) {
  const KeySource &source = keySources_[index];
  // Unmatched keys were reported together.
  if (placementFailed_[index] || source.kind == KeySource::Unmatched)
    return std::nullopt;
  if (source.kind == KeySource::StateOf) {
    // The model key's placement, for the state's shape.
    const LayoutKey &model = keys_->keys[source.index];
    const KeySource &modelSource = keySources_[source.index];
    std::optional<KeyPlacement> placement;
    if (modelSource.kind == KeySource::Listed) {
      const KeyPlacement &listed = listed_[modelSource.index].placement;
      placement = KeyPlacement{std::nullopt, &listed.mesh(), listed.placement,
                               listed.flatAxis};
    } else {
      placement = placementOf(source.index, model.globalShape,
                              "key " + quoteText(model.key));
    }
    if (!placement) {
      placementFailed_[index] = true;
      return std::nullopt;
    }
    std::string_view suffix =
        splitOptimizerSuffix(keys_->keys[index].key).second;
    if (isBetaPowSuffix(suffix)) {
      placement->placement = TensorPlacement::replicated(shape.size());
      placement->flatAxis.reset();
    } else if (shape != llvm::ArrayRef<int64_t>(model.globalShape)) {
      diags_
          .error(SourceLocation{}, keyContext + " of " + keys_->origin +
                                       " has shape " + formatShape(shape) +
                                       ", but its model key " +
                                       quoteText(model.key) + " has " +
                                       formatShape(model.globalShape))
          .hint("an optimizer state is placed like its model key, so it "
                "needs the same shape");
      placementFailed_[index] = true;
      return std::nullopt;
    }
    return placement;
  }

  Rule &rule = source.index < rules_.size() ? rules_[source.index] : *default_;
  // After a rule's first failing key, its other failures are only counted.
  quiet_ = rule.failed != 0;
  std::optional<KeyPlacement> out =
      placeRuleKey(rule, source, shape, keyContext);
  quiet_ = false;
  if (!out) {
    ++rule.failed;
    placementFailed_[index] = true;
  }
  return out;
}

std::optional<KeyPlacement>
LayoutSpecParser::placeRuleKey(const Rule &rule, const KeySource &source,
                               llvm::ArrayRef<int64_t> shape,
                               const std::string &keyContext) {
  std::string context = keyContext + " (" + rule.name + "): ";
  std::vector<std::pair<unsigned, int64_t>> idSelects;
  for (bool layers : {true, false}) {
    std::optional<unsigned> axis = layers ? rule.stageAxis : rule.expertAxis;
    if (!axis)
      continue;
    const std::optional<int64_t> &id =
        layers ? source.captures.layerId : source.captures.expertId;
    const std::optional<IdPartition> &partition =
        layers ? rule.stagePartition : rule.expertPartition;
    const IdAxis &ids = layers ? *stages_ : *experts_;
    std::optional<int64_t> part = id ? partition->partOf(*id) : std::nullopt;
    if (!part) {
      At at(*this, {JsonPathStep::member(ids.field)});
      if (ids.ranges || ids.count)
        where_.push_back(
            JsonPathStep::member(ids.ranges ? "ranges" : ids.countField));
      error(context +
            (id ? ids.idName + std::string(" ") + std::to_string(*id) +
                      " is outside the " + std::to_string(ids.ids) + " " +
                      ids.idName + (ids.ids == 1 ? "" : "s") + " that '" +
                      ids.field + "' splits"
                : std::string("its ") + ids.idName + " id is too large"))
          .hint(ids.ranges ? "extend the last range"
                           : std::string("raise '") + ids.countField + "'");
      return std::nullopt;
    }
    idSelects.emplace_back(*axis, *part);
  }
  return placeKey(rule.spec, context, shape, idSelects);
}

void LayoutSpecParser::reportQuietFailures() {
  for (size_t r = 0; r <= rules_.size(); ++r) {
    if (r == rules_.size() && !default_)
      break;
    const Rule &rule = ruleAt(r);
    if (rule.failed < 2)
      continue;
    At at(*this, rule.spec.path);
    if (!rule.patternField.empty())
      where_.push_back(JsonPathStep::member(rule.patternField));
    diags_.report(Severity::Note, locate(locator_.valueOffset(where_)),
                  rule.name + ": " + std::to_string(rule.failed - 1) +
                      " more " + (rule.failed == 2 ? "key" : "keys") +
                      " it matches cannot be placed either (only the first "
                      "is shown)");
  }
}

} // namespace layoutspec

} // namespace aoa
