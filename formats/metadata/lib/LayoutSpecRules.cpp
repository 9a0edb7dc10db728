//===- LayoutSpecRules.cpp - Rules, stages and experts --------------------===//
//
// Reading the rules and the default (a pattern, `match` or `regex`, and a
// placement) and the spec's "stages" and "experts" (ids placed on a mesh
// axis by contiguous ranges), and finding the mesh axis a rule's captured
// `$LAYER_ID` or `$EXPERT_ID` selects on. The rules are applied to the key
// list in LayoutSpecKeyList.cpp.
//
//===----------------------------------------------------------------------===//
#include "LayoutSpecParser.h"
#include "LayoutSpecStrings.h"

namespace aoa {

namespace layoutspec {

//===----------------------------------------------------------------------===//
// Reading rules, stages and experts
//===----------------------------------------------------------------------===//

void LayoutSpecParser::parseRules(const Json &value) {
  if (!value.is_array()) {
    error("'rules' must be a list of rules, not " + describeJsonValue(value))
        .hint(kRuleHint);
    return;
  }
  for (size_t i = 0; i < value.size(); ++i) {
    if (stopForErrors())
      return;
    Enter enter(*this, JsonPathStep::element(i));
    std::string name = "rules[" + std::to_string(i) + "]";
    if (std::optional<Rule> rule = parseRule(value[i], name, false))
      rules_.push_back(std::move(*rule));
  }
}

void LayoutSpecParser::parseDefault(const Json &value) {
  if (std::optional<Rule> rule = parseRule(value, "the default", true))
    default_ = std::move(*rule);
}

std::optional<Rule> LayoutSpecParser::parseRule(const Json &value,
                                                const std::string &name,
                                                bool isDefault) {
  std::string context = name + ": ";
  if (!value.is_object()) {
    error(context + (isDefault ? "the default" : "a rule") +
          " must be an object, not " + describeJsonValue(value))
        .hint(kRuleHint);
    return std::nullopt;
  }
  unsigned errors = errorCount();
  Rule rule;
  rule.name = name;
  PlacementFields fields;
  const Json *matchValue = nullptr, *optionalValue = nullptr;
  forEachField(value, isDefault ? defaultFields() : ruleFields(), context,
               isDefault ? "the default" : "a rule",
               [&](const std::string &field, const Json &fieldValue) {
                 if (field == "match" || field == "regex") {
                   if (matchValue) {
                     errorAtKey(context + "both 'match' and 'regex' are given")
                         .hint(
                             "'match' is a glob, 'regex' a regular expression; "
                             "give one");
                     return;
                   }
                   matchValue = &fieldValue;
                   rule.patternField = field;
                 } else if (field == "optional") {
                   optionalValue = &fieldValue;
                 } else {
                   takePlacementField(field, fieldValue, context, fields);
                 }
               });
  if (!isDefault && !matchValue)
    error(context + "a rule needs 'match' (a glob) or 'regex'").hint(kRuleHint);
  if (matchValue) {
    Enter enter(*this, JsonPathStep::member(rule.patternField));
    std::optional<std::string> text = readString(
        *matchValue, context + rule.patternField,
        "a pattern over whole keys, e.g. \"model.layers.$LAYER_ID.*\"");
    if (text) {
      KeyPatternError problem;
      rule.pattern = rule.patternField == "match"
                         ? KeyPattern::glob(*text, &problem)
                         : KeyPattern::regex(*text, &problem);
      if (rule.pattern) {
        rule.name += " (" + quoteText(*text) + ")";
        context = rule.name + ": ";
      } else if (problem.offset) {
        errorInString(*problem.offset, context + problem.message)
            .hint(problem.hint);
      } else {
        error(context + problem.message).hint(problem.hint);
      }
    }
  }
  if (optionalValue) {
    Enter enter(*this, JsonPathStep::member("optional"));
    if (optionalValue->is_boolean())
      rule.optional = optionalValue->get<bool>();
    else
      error(context + "'optional' must be true or false, not " +
            describeJsonValue(*optionalValue))
          .hint("\"optional\": true allows a rule to match no key");
  }
  bool placementOk = checkPlacementFields(fields, context);
  if (!placementOk || errorCount() != errors)
    return std::nullopt;
  if (!readPlacementSpec(fields, context, rule.spec) ||
      !resolveRuleIds(rule, fields))
    return std::nullopt;
  return rule;
}

bool LayoutSpecParser::resolveRuleIds(Rule &rule,
                                      const PlacementFields &fields) {
  for (bool layers : {true, false}) {
    const std::optional<IdAxis> &ids = layers ? stages_ : experts_;
    bool captures = rule.pattern && (layers ? rule.pattern->capturesLayerId()
                                            : rule.pattern->capturesExpertId());
    if (!ids || !captures)
      continue;
    const DeviceMesh &mesh = rule.spec.mesh();
    std::optional<unsigned> axis = mesh.findAxis(ids->axis);
    if (!axis) {
      Enter enter(*this, JsonPathStep::member(rule.patternField));
      error(rule.name + ": the pattern captures " + ids->placeholder +
            ", but the rule's mesh has no axis " + quoteText(ids->axis) +
            " for '" + ids->field + "'")
          .hint("place the rule on a mesh with that axis, or match the " +
                std::string(ids->idName) + " ids with '*'");
      return false;
    }
    if (fields.select && fields.select->is_object() &&
        fields.select->contains(ids->axis)) {
      Enter enter(*this, JsonPathStep::member("select"));
      Enter member(*this, JsonPathStep::member(ids->axis));
      errorAtKey(rule.name + ": selects on " + quoteText(ids->axis) +
                 ", the axis '" + ids->field + "' places " + ids->placeholder +
                 " on")
          .hint("leave the axis out of 'select', or match the " +
                std::string(ids->idName) + " ids with '*'");
      return false;
    }
    if (ids->ranges &&
        static_cast<int64_t>(ids->ranges->parts()) != mesh.shape()[*axis]) {
      Enter enter(*this, JsonPathStep::member(rule.patternField));
      error(rule.name + ": '" + ids->field + "' has " +
            std::to_string(ids->ranges->parts()) + " ranges, but the rule's " +
            "mesh " + mesh.describeAxis(*axis) + " has " +
            std::to_string(mesh.shape()[*axis]) + " indices")
          .hint("give one range per index of the axis");
      return false;
    }
    (layers ? rule.stageAxis : rule.expertAxis) = *axis;
  }
  return true;
}

std::optional<IdAxis> LayoutSpecParser::parseIdAxis(const Json &value,
                                                    const char *field,
                                                    const char *idName,
                                                    const char *placeholder,
                                                    const char *countField) {
  std::string context = std::string(field) + ": ";
  std::string hint = std::string("e.g. \"") + field +
                     "\": {\"axis\": \"pp\"} splits the " + idName +
                     " ids rules capture with " + placeholder +
                     " evenly over the axis, or {\"axis\": \"pp\", "
                     "\"ranges\": [[0, 13], [14, 31]]} (inclusive)";
  if (!value.is_object()) {
    error(context + "must be an object, not " + describeJsonValue(value))
        .hint(hint);
    return std::nullopt;
  }
  unsigned errors = errorCount();
  IdAxis ids;
  ids.idName = idName;
  ids.field = field;
  ids.placeholder = placeholder;
  ids.countField = countField;
  bool hasAxis = false;
  const Json *rangesValue = nullptr;
  forEachField(value, {"axis", countField, "ranges"}, context, field,
               [&](const std::string &name, const Json &fieldValue) {
                 if (name == "axis") {
                   if (std::optional<std::string> axis =
                           readString(fieldValue, context + "axis",
                                      "the name of a mesh axis, e.g. \"pp\"")) {
                     ids.axis = *axis;
                     hasAxis = true;
                   }
                 } else if (name == countField) {
                   ids.count = readInt(fieldValue, context + countField, hint);
                   if (ids.count && *ids.count < 1) {
                     error(context + countField + " must be at least 1, not " +
                           std::to_string(*ids.count))
                         .hint(hint);
                     ids.count.reset();
                   }
                 } else {
                   rangesValue = &fieldValue;
                 }
               });
  if (!hasAxis && errorCount() == errors)
    error(context + "missing the field 'axis'").hint(hint);
  if (rangesValue) {
    Enter enter(*this, JsonPathStep::member("ranges"));
    std::optional<std::vector<std::pair<int64_t, int64_t>>> ranges =
        readList<std::pair<int64_t, int64_t>>(
            *rangesValue, context + "ranges", "[first, last] pairs", hint,
            [&](const Json &element, const std::string &name)
                -> std::optional<std::pair<int64_t, int64_t>> {
              std::optional<std::vector<int64_t>> pair =
                  readIntList(element, name, hint);
              if (!pair)
                return std::nullopt;
              if (pair->size() != 2) {
                error(name + " must be [first, last], not a list of " +
                      std::to_string(pair->size()))
                    .hint("ranges are inclusive: [0, 13] is ids 0 to 13");
                return std::nullopt;
              }
              return std::make_pair((*pair)[0], (*pair)[1]);
            });
    if (ranges) {
      IdPartitionError problem;
      ids.ranges = IdPartition::fromRanges(*ranges, &problem);
      if (!ids.ranges) {
        std::vector<JsonPathStep> steps;
        if (problem.range)
          steps.push_back(JsonPathStep::element(*problem.range));
        errorBelow(steps, context + problem.message).hint(problem.hint);
      } else if (ids.count && *ids.count != ids.ranges->count()) {
        error(context + "the ranges cover " +
              std::to_string(ids.ranges->count()) + " " + idName + "s, but " +
              countField + " is " + std::to_string(*ids.count))
            .hint("the last range ends at " + std::string(countField) + " - 1");
      }
    }
  }
  if (errorCount() != errors)
    return std::nullopt;
  return ids;
}

} // namespace layoutspec

} // namespace aoa
