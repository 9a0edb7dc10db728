//===- LayoutSpecLoader.cpp -----------------------------------------------===//
//
// The spec is small next to the metadata it expands into, so it is parsed
// into nlohmann's DOM and walked in a fixed order (meshes before tensors,
// whatever the file's order). The parser keeps the JSON path of the value it
// is reading; a diagnostic finds its place by walking the text along that
// path (JsonLocator). This file reads the document, the file pattern and
// optimizer states; meshes are in LayoutSpecMeshes.cpp, placements and rules
// in LayoutSpecPlacement.cpp and LayoutSpecRules.cpp.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/LayoutSpecLoader.h"

#include "LayoutSpecParser.h"
#include "LayoutSpecStrings.h"
#include "aoa/ir/FileText.h"
#include "aoa/ir/OptimizerState.h"

#include <limits>

namespace aoa {

namespace layoutspec {

//===----------------------------------------------------------------------===//
// Diagnostics and values
//===----------------------------------------------------------------------===//

InFlightDiagnostic LayoutSpecParser::error(std::string message) {
  return sink().error(locate(locator_.valueOffset(where_)), std::move(message));
}

InFlightDiagnostic
LayoutSpecParser::errorBelow(llvm::ArrayRef<JsonPathStep> steps,
                             std::string message) {
  std::vector<JsonPathStep> path = where_;
  path.insert(path.end(), steps.begin(), steps.end());
  return sink().error(locate(locator_.valueOffset(path)), std::move(message));
}

InFlightDiagnostic LayoutSpecParser::errorAtKey(std::string message) {
  return sink().error(locate(locator_.keyOffset(where_)), std::move(message));
}

InFlightDiagnostic LayoutSpecParser::errorInString(size_t offset,
                                                   std::string message) {
  size_t at = locator_.valueOffset(where_);
  std::string_view text = sources_.text(buffer_);
  // Past the opening quote; only exact while no escape comes first.
  if (at < text.size() && text[at] == '"' && at + 1 + offset < text.size() &&
      text.substr(at + 1, offset).find_first_of("\\\"") ==
          std::string_view::npos)
    at += 1 + offset;
  return sink().error(locate(at), std::move(message));
}

bool LayoutSpecParser::stopForErrors() {
  if (stoppedForErrors_)
    return true;
  if (errorCount() < kMaxErrors)
    return false;
  stoppedForErrors_ = true;
  error("too many errors in layout spec '" + path_ + "'; stopped after " +
        std::to_string(kMaxErrors))
      .hint("fix the errors above and run again");
  return true;
}

std::optional<int64_t> LayoutSpecParser::readInt(const Json &value,
                                                 const std::string &what,
                                                 const std::string &hint) {
  if (!value.is_number_integer()) {
    error(what + " must be an integer, not " + describeJsonValue(value))
        .hint(hint);
    return std::nullopt;
  }
  // nlohmann stores non-negative integers unsigned, up to 2^64 - 1.
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    error(what + " is " + value.dump() + ", too large").hint(hint);
    return std::nullopt;
  }
  return value.get<int64_t>();
}

std::optional<std::string>
LayoutSpecParser::readString(const Json &value, const std::string &what,
                             const std::string &hint) {
  if (value.is_string())
    return value.get<std::string>();
  error(what + " must be a string, not " + describeJsonValue(value)).hint(hint);
  return std::nullopt;
}

std::optional<std::vector<int64_t>>
LayoutSpecParser::readIntList(const Json &value, const std::string &what,
                              const std::string &hint) {
  return readList<int64_t>(value, what, "integers", hint,
                           [&](const Json &element, const std::string &name) {
                             return readInt(element, name, hint);
                           });
}

std::optional<std::vector<std::string>>
LayoutSpecParser::readStringList(const Json &value, const std::string &what,
                                 const std::string &hint) {
  return readList<std::string>(
      value, what, "strings", hint,
      [&](const Json &element, const std::string &name) {
        return readString(element, name, hint);
      });
}

//===----------------------------------------------------------------------===//
// The document
//===----------------------------------------------------------------------===//

std::optional<ShardMetadata> LayoutSpecParser::parse() {
  std::optional<Json> parsed =
      parseJsonBuffer(sources_, buffer_, diags_, "in layout spec", kSpecHint);
  if (!parsed)
    return std::nullopt;
  const Json &root = *parsed;
  if (std::optional<JsonLocator::DuplicateKey> duplicate =
          locator_.firstDuplicateKey()) {
    diags_
        .error(locate(duplicate->offset), "key " + quoteText(duplicate->key) +
                                              " appears twice in one object")
        .note(locate(duplicate->firstOffset), "first given here")
        .hint("give each key once");
    return std::nullopt;
  }
  if (!root.is_object()) {
    error("a layout spec must be a JSON object, not " + describeJsonValue(root))
        .hint(kSpecHint);
    return std::nullopt;
  }

  JsonFields fields;
  forEachField(root, rootFields(), "", "the layout spec",
               [&](const std::string &name, const Json &value) {
                 fields[name] = &value;
               });
  bool headerOk =
      checkHeader(fieldOf(fields, "format"), fieldOf(fields, "version"));
  parseSettings(fields);
  parsePlacements(fields, headerOk);
  if (errorCount() != 0)
    return std::nullopt;

  // Without {rank} every process would write the same file.
  if (!filePattern_.mentionsRank() && fileOfRank_.size() > 1) {
    Enter enter(*this, JsonPathStep::member("file_pattern"));
    error("file_pattern " + quoteText(filePattern_.format(0)) +
          " names the same file for all " + std::to_string(fileOfRank_.size()) +
          " ranks")
        .hint("put {rank} or {rank:05d} in the file name");
    return std::nullopt;
  }
  return builder_.finish();
}

void LayoutSpecParser::parseSettings(const JsonFields &fields) {
  if (const Json *mesh = fieldOf(fields, "mesh")) {
    Enter enter(*this, JsonPathStep::member("mesh"));
    defaultMesh_ = parseMesh(*mesh, "mesh: ");
  }
  if (const Json *meshes = fieldOf(fields, "meshes")) {
    Enter enter(*this, JsonPathStep::member("meshes"));
    parseMeshes(*meshes);
  }
  if (const Json *pattern = fieldOf(fields, "file_pattern")) {
    Enter enter(*this, JsonPathStep::member("file_pattern"));
    parseFilePattern(*pattern);
  } else {
    std::string ignored;
    filePattern_ = *FilePattern::parse(kDefaultFilePattern, ignored);
  }
  if (const Json *states = fieldOf(fields, "optimizer_states")) {
    Enter enter(*this, JsonPathStep::member("optimizer_states"));
    parseOptimizerStates(*states);
  }
  if (const Json *stages = fieldOf(fields, "stages")) {
    Enter enter(*this, JsonPathStep::member("stages"));
    stages_ =
        parseIdAxis(*stages, "stages", "layer", "$LAYER_ID", "num_layers");
  }
  if (const Json *experts = fieldOf(fields, "experts")) {
    Enter enter(*this, JsonPathStep::member("experts"));
    experts_ =
        parseIdAxis(*experts, "experts", "expert", "$EXPERT_ID", "num_experts");
  }
}

void LayoutSpecParser::parsePlacements(const JsonFields &fields,
                                       bool headerOk) {
  const Json *tensors = fieldOf(fields, "tensors");
  const Json *rules = fieldOf(fields, "rules");
  const Json *defaultRule = fieldOf(fields, "default");
  hasRules_ = rules || defaultRule;
  if (!tensors && !hasRules_) {
    error("the layout spec is missing the field 'tensors'").hint(kSpecHint);
    return;
  }
  if (hasRules_ && !keys_) {
    Enter enter(*this, JsonPathStep::member(rules ? "rules" : "default"));
    errorAtKey("rules place the keys of a checkpoint or of statements' "
               "outputs, and none were given")
        .hint("run aoa-layout SPEC --src METADATA (and --config STATEMENTS "
              "to place the statements' outputs)");
    return;
  }
  // Tensors and rules are read only once everything they refer to is
  // valid; otherwise one bad mesh would be reported once per tensor.
  if (!headerOk || errorCount() != 0)
    return;
  if (keys_)
    for (size_t i = 0; i < keys_->keys.size(); ++i)
      keyIndex_.emplace(keys_->keys[i].key, i);
  if (tensors) {
    Enter enter(*this, JsonPathStep::member("tensors"));
    parseTensors(*tensors);
  }
  if (rules && !stopForErrors()) {
    Enter enter(*this, JsonPathStep::member("rules"));
    parseRules(*rules);
  }
  if (defaultRule && !stopForErrors()) {
    Enter enter(*this, JsonPathStep::member("default"));
    parseDefault(*defaultRule);
  }
  if (errorCount() == 0)
    placeKeyList();
}

bool LayoutSpecParser::checkHeader(const Json *format, const Json *version) {
  bool ok = true;
  if (!format || !version) {
    error(std::string("the layout spec is missing the field '") +
          (format ? "version" : "format") + "'")
        .hint(kSpecHint);
    return false;
  }
  {
    Enter enter(*this, JsonPathStep::member("format"));
    if (!format->is_string() || *format != "aoa-layout") {
      error("unsupported layout spec format " +
            (format->is_string() ? quoteText(format->get<std::string>())
                                 : describeJsonValue(*format)))
          .hint("a layout spec's \"format\" is \"aoa-layout\"; shard "
                "metadata (\"aoa-metadata\") needs no expansion");
      ok = false;
    }
  }
  Enter enter(*this, JsonPathStep::member("version"));
  if (!version->is_number_integer() || *version != 1) {
    error("unsupported layout spec version " + version->dump())
        .hint("this build reads aoa-layout version 1");
    ok = false;
  }
  return ok;
}

//===----------------------------------------------------------------------===//
// File pattern and optimizer states
//===----------------------------------------------------------------------===//

void LayoutSpecParser::parseFilePattern(const Json &value) {
  std::optional<std::string> text = readString(
      value, "file_pattern",
      "a file name with {rank}, e.g. \"rank{rank:05d}.safetensors\"");
  if (!text)
    return;
  std::string problem;
  if (std::optional<FilePattern> pattern = FilePattern::parse(*text, problem))
    filePattern_ = std::move(*pattern);
  else
    error(problem).hint("the placeholders are {rank} and {rank:0Nd} (the "
                        "rank zero-padded to N digits)");
}

void LayoutSpecParser::parseOptimizerStates(const Json &value) {
  std::vector<std::string> known;
  for (std::string_view suffix : kOptimizerSuffixes)
    known.emplace_back(suffix.substr(1));
  std::string hint = "optimizer states are " + llvm::join(known, ", ");
  std::optional<std::vector<std::string>> names =
      readStringList(value, "optimizer_states", hint);
  if (!names)
    return;
  for (size_t i = 0; i < names->size(); ++i) {
    Enter enter(*this, JsonPathStep::element(i));
    auto it = std::find(known.begin(), known.end(), (*names)[i]);
    if (it == known.end()) {
      std::string suggestion = closestSpelling((*names)[i], known);
      error("unknown optimizer state " + quoteText((*names)[i]))
          .hint(suggestion.empty() ? hint
                                   : "did you mean '" + suggestion + "'?");
      continue;
    }
    std::string_view suffix = kOptimizerSuffixes[it - known.begin()];
    if (std::find(optimizerSuffixes_.begin(), optimizerSuffixes_.end(),
                  suffix) != optimizerSuffixes_.end()) {
      error("optimizer state " + quoteText((*names)[i]) + " is listed twice")
          .hint("list each state once");
      continue;
    }
    optimizerSuffixes_.push_back(suffix);
  }
}

} // namespace layoutspec

LayoutKeyList layoutKeysOf(const ShardMetadata &metadata, std::string origin) {
  LayoutKeyList list;
  list.origin = std::move(origin);
  list.keys.reserve(metadata.tensorCount());
  for (TensorRef tensor : metadata.tensors())
    list.keys.push_back(
        LayoutKey{std::string(tensor.key()), tensor.dtype(),
                  std::vector<int64_t>(tensor.globalShape().begin(),
                                       tensor.globalShape().end())});
  return list;
}

std::optional<ShardMetadata> loadLayoutSpecText(const std::string &path,
                                                std::string text,
                                                SourceManager &sources,
                                                DiagnosticEngine &diags,
                                                const LayoutKeyList *keys) {
  uint32_t buffer = sources.addBuffer(path, std::move(text));
  return layoutspec::LayoutSpecParser(path, buffer, sources, diags, keys)
      .parse();
}

std::optional<ShardMetadata> loadLayoutSpec(const std::string &path,
                                            SourceManager &sources,
                                            DiagnosticEngine &diags,
                                            const LayoutKeyList *keys) {
  std::string text;
  if (std::optional<std::string> failure = readFileToString(path, text)) {
    diags
        .error(SourceLocation{},
               "cannot read layout spec '" + path + "': " + *failure)
        .hint("pass the path of a layout spec (docs/layouts.md)");
    return std::nullopt;
  }
  return loadLayoutSpecText(path, std::move(text), sources, diags, keys);
}

} // namespace aoa
