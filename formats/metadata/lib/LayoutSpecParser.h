//===- LayoutSpecParser.h - The layout spec's reader ------------*- C++ -*-===//
//
// Private to formats/metadata. The parser is split over six files:
//  - LayoutSpecLoader.cpp: the document, file pattern, optimizer states,
//    and the public entry points;
//  - LayoutSpecMeshes.cpp: meshes (the spec's mesh and its named meshes);
//  - LayoutSpecPlacement.cpp: placements as written (TENSOR entries, rules,
//    the default) and resolving them for one key;
//  - LayoutSpecTensors.cpp: `tensors` entries, and adding placed tensors'
//    shards and optimizer states;
//  - LayoutSpecRules.cpp: rules, stages and experts;
//  - LayoutSpecKeyList.cpp: placing a key list.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_METADATA_LIB_LAYOUTSPECPARSER_H
#define AOA_FORMATS_METADATA_LIB_LAYOUTSPECPARSER_H

#include "LayoutFilePattern.h"
#include "aoa/formats/json/JsonLocator.h"
#include "aoa/formats/json/JsonSupport.h"
#include "aoa/formats/metadata/LayoutSpecLoader.h"
#include "aoa/ir/IdPartition.h"
#include "aoa/ir/KeyPattern.h"
#include "aoa/ir/MeshLayout.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace aoa {

namespace layoutspec {

using Json = nlohmann::ordered_json;

constexpr unsigned kMaxErrors = 20;

/// An object's members by name.
using JsonFields = std::map<std::string, const Json *>;

/// The member `name` of `fields`, or null.
inline const Json *fieldOf(const JsonFields &fields, const char *name) {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : it->second;
}

/// A mesh's fields as found, under the names Paddle or MindSpore give them
/// (shape or device_matrix, dim_names or alias_name).
struct MeshFields {
  const Json *shape = nullptr;
  const Json *names = nullptr;
  const Json *ids = nullptr;    ///< process_ids
  const Json *nested = nullptr; ///< process_mesh
  std::string shapeField, namesField, idsField, nestedField;
};

/// The placement fields of a TENSOR entry, a rule or the default, as found.
struct PlacementFields {
  const Json *mapping = nullptr; ///< dims_mapping or tensor_map
  std::string mappingField;
  const Json *mesh = nullptr;
  const Json *select = nullptr;
  const Json *replicate = nullptr;
  const Json *flat = nullptr;
};

/// A placement as written, read once: the mesh after its `select`, the
/// placement's spelling, and where it is written (errors about a key it
/// places point there).
struct PlacementSpec {
  std::vector<JsonPathStep> path;
  /// "tensor 'w': ", "rules[2] ('model.*'): ", for messages.
  std::string context;
  std::optional<DeviceMesh> ownMesh;
  const DeviceMesh *sharedMesh = nullptr;
  /// dims_mapping / tensor_map, or empty (replicate, or flat alone).
  std::string mappingField;
  const Json *mappingValue = nullptr;
  std::vector<DimPlacementSpelling> entries;
  std::optional<unsigned> flatAxis;

  const DeviceMesh &mesh() const { return ownMesh ? *ownMesh : *sharedMesh; }
};

/// Where one key goes: its mesh (after every select), which axes split it,
/// and for flat placements the axis its elements are spread over.
struct KeyPlacement {
  std::optional<DeviceMesh> ownMesh;
  const DeviceMesh *sharedMesh = nullptr;
  std::optional<TensorPlacement> placement;
  std::optional<unsigned> flatAxis;

  const DeviceMesh &mesh() const { return ownMesh ? *ownMesh : *sharedMesh; }
};

/// Spec-level "stages" or "experts": ids rules capture, placed on a mesh
/// axis by contiguous ranges.
struct IdAxis {
  /// "layer" or "expert"; the spec field ("stages", "experts"); the
  /// placeholder and the count field ("num_layers", "num_experts").
  const char *idName = "";
  const char *field = "";
  const char *placeholder = "";
  const char *countField = "";
  std::string axis;
  std::optional<int64_t> count;
  std::optional<IdPartition> ranges;
  /// The ids there are: count, the ranges' count, or the largest id a rule
  /// captured plus one (set once every key is matched).
  int64_t ids = 0;
};

/// A rule (or the default, with no pattern).
struct Rule {
  std::optional<KeyPattern> pattern;
  /// "match" or "regex".
  std::string patternField;
  /// "rules[2] ('model.*')" or "the default", for messages.
  std::string name;
  PlacementSpec spec;
  bool optional = false;
  /// The mesh axes its captured layer / expert ids select on, and how the
  /// ids are split over them (set once every key is matched).
  std::optional<unsigned> stageAxis, expertAxis;
  std::optional<IdPartition> stagePartition, expertPartition;
  /// Keys it placed (state keys that follow theirs not counted).
  size_t placed = 0;
  /// Keys it could not place: the first is reported, the others counted.
  size_t failed = 0;
};

/// Where a key of the key list takes its placement from.
struct KeySource {
  enum Kind { Unmatched, Listed, RuleMatch, StateOf } kind = Unmatched;
  /// RuleMatch: the rule (rules_.size() for the default); StateOf: the
  /// model key's index in the key list.
  size_t index = 0;
  KeyCaptures captures;
};

/// A `tensors` entry: its dtype, shape and where it goes.
struct ListedTensor {
  std::string key;
  DType dtype = DType::F32;
  std::vector<int64_t> globalShape;
  KeyPlacement placement;
  std::vector<JsonPathStep> path;
};

class LayoutSpecParser {
public:
  LayoutSpecParser(const std::string &path, uint32_t buffer,
                   SourceManager &sources, DiagnosticEngine &diags,
                   const LayoutKeyList *keys)
      : path_(path), buffer_(buffer), sources_(sources), diags_(diags),
        quietDiags_(sources), keys_(keys), locator_(sources.text(buffer)),
        errorsBefore_(diags.errorCount()) {}

  std::optional<ShardMetadata> parse();

private:
  //===--- Where we are (LayoutSpecLoader.cpp) ---------------------------===//

  /// Steps into a child of the current value for the object's lifetime.
  class Enter {
  public:
    Enter(LayoutSpecParser &parser, JsonPathStep step) : parser_(parser) {
      parser_.where_.push_back(std::move(step));
    }
    ~Enter() { parser_.where_.pop_back(); }
    Enter(const Enter &) = delete;
    Enter &operator=(const Enter &) = delete;

  private:
    LayoutSpecParser &parser_;
  };
  /// Moves to another place in the document for the object's lifetime.
  class At {
  public:
    At(LayoutSpecParser &parser, std::vector<JsonPathStep> path)
        : parser_(parser), saved_(std::move(parser.where_)) {
      parser_.where_ = std::move(path);
    }
    ~At() { parser_.where_ = std::move(saved_); }
    At(const At &) = delete;
    At &operator=(const At &) = delete;

  private:
    LayoutSpecParser &parser_;
    std::vector<JsonPathStep> saved_;
  };

  SourceLocation locate(size_t offset) const {
    return sources_.locationForOffset(buffer_, offset);
  }
  /// An error at the current value.
  InFlightDiagnostic error(std::string message);
  /// An error at a value below the current one.
  InFlightDiagnostic errorBelow(llvm::ArrayRef<JsonPathStep> steps,
                                std::string message);
  /// An error at the key of the current member.
  InFlightDiagnostic errorAtKey(std::string message);
  /// An error at character `offset` of the current value, a string, when it
  /// can be found (no escapes before it); else at the value.
  InFlightDiagnostic errorInString(size_t offset, std::string message);
  unsigned errorCount() const { return diags_.errorCount() - errorsBefore_; }
  /// Where errors go: nowhere while quiet_ (more keys failing under a rule
  /// that already reported one).
  DiagnosticEngine &sink() { return quiet_ ? quietDiags_ : diags_; }
  /// Reports "too many errors" once the cap is reached; true then.
  bool stopForErrors();

  //===--- Values (LayoutSpecLoader.cpp) ---------------------------------===//

  /// Calls visit(name, value) for every member of `object` inside its path;
  /// reports members not in `known`.
  template <typename Visit>
  void forEachField(const Json &object, const std::vector<std::string> &known,
                    const std::string &context, const char *objectName,
                    Visit visit);
  std::optional<int64_t> readInt(const Json &value, const std::string &what,
                                 const std::string &hint);
  std::optional<std::string> readString(const Json &value,
                                        const std::string &what,
                                        const std::string &hint);
  template <typename T, typename ReadElement>
  std::optional<std::vector<T>>
  readList(const Json &value, const std::string &what, const char *elements,
           const std::string &hint, ReadElement readElement);
  std::optional<std::vector<int64_t>> readIntList(const Json &value,
                                                  const std::string &what,
                                                  const std::string &hint);
  std::optional<std::vector<std::string>>
  readStringList(const Json &value, const std::string &what,
                 const std::string &hint);

  //===--- The document (LayoutSpecLoader.cpp) ---------------------------===//

  bool checkHeader(const Json *format, const Json *version);
  /// Reads what tensors and rules refer to: meshes, the file pattern,
  /// optimizer states, stages and experts.
  void parseSettings(const JsonFields &fields);
  /// Reads the `tensors` entries and rules and places the key list, when
  /// the header and everything they refer to are valid.
  void parsePlacements(const JsonFields &fields, bool headerOk);
  void parseFilePattern(const Json &value);
  void parseOptimizerStates(const Json &value);

  //===--- Meshes (LayoutSpecMeshes.cpp) ---------------------------------===//

  std::optional<DeviceMesh> parseMesh(const Json &value,
                                      const std::string &context);
  /// Finds the mesh's fields in the object `value`; false after reporting
  /// fields that are missing or say the same thing.
  bool findMeshFields(const Json &value, const std::string &context,
                      MeshFields &fields);
  std::optional<DeviceMesh> readMesh(const MeshFields &fields,
                                     const std::string &context);
  bool readProcessMesh(const Json &value, const std::string &context,
                       std::vector<int64_t> &shape, std::vector<int64_t> &ids);
  bool walkProcessMesh(const Json &value, const std::string &context,
                       const char *hint, llvm::ArrayRef<int64_t> shape,
                       std::vector<int64_t> &ids);
  void reportMeshError(const LayoutError &problem, const std::string &context,
                       const std::string &shapeField,
                       const std::string &namesField, bool nestedIds,
                       llvm::ArrayRef<int64_t> shape);
  void parseMeshes(const Json &value);

  //===--- Placements (LayoutSpecPlacement.cpp) --------------------------===//

  /// Takes `name` into `fields` when it is a placement field; false for
  /// other fields.
  bool takePlacementField(const std::string &name, const Json &value,
                          const std::string &context, PlacementFields &fields);
  /// Checks that the fields give a placement: a mapping, `replicate` or
  /// `flat` (which may go with a mapping); errors at the current object.
  bool checkPlacementFields(const PlacementFields &fields,
                            const std::string &context);
  /// Reads checked fields (of the current value, an object) into `spec`:
  /// the mesh and its select, the mapping, the flat axis.
  bool readPlacementSpec(const PlacementFields &fields,
                         const std::string &context, PlacementSpec &spec);
  /// Where `key` (of shape `globalShape`) goes under `spec`, on the slice
  /// `idSelects` (axis, index) picks; errors are reported at `spec`.
  std::optional<KeyPlacement>
  placeKey(const PlacementSpec &spec, const std::string &keyContext,
           llvm::ArrayRef<int64_t> globalShape,
           llvm::ArrayRef<std::pair<unsigned, int64_t>> idSelects);
  std::optional<DeviceMesh> tensorMesh(const Json *value,
                                       const std::string &context,
                                       const DeviceMesh *&shared);
  bool applySelect(const Json &value, const std::string &context,
                   std::optional<DeviceMesh> &own, const DeviceMesh *&mesh);
  std::optional<std::vector<DimPlacementSpelling>>
  readPlacement(const Json &value, const std::string &what);
  std::optional<unsigned> readFlatAxis(const Json &value,
                                       const DeviceMesh &mesh,
                                       const std::string &context);

  //===--- Tensors (LayoutSpecTensors.cpp) -------------------------------===//

  void parseTensors(const Json &value);
  void parseTensor(const std::string &key, const Json &value);
  /// Reads the dtype and shape a `tensors` entry gives (or its key-list
  /// entry has).
  bool readTensorType(const std::string &key, const Json &value,
                      const std::string &context, PlacementFields &fields,
                      ListedTensor &out);
  /// Adds the tensor's shards, then its generated optimizer states.
  void addPlacedTensor(const std::string &key, DType dtype,
                       llvm::ArrayRef<int64_t> globalShape,
                       const KeyPlacement &placement);
  void addTensor(const std::string &key, DType dtype,
                 llvm::ArrayRef<int64_t> globalShape, const DeviceMesh &mesh,
                 const TensorPlacement &placement,
                 std::optional<unsigned> flatAxis);
  void addOptimizerStates(const std::string &key, DType dtype,
                          llvm::ArrayRef<int64_t> globalShape,
                          const KeyPlacement &placement);
  uint32_t fileId(uint32_t rank);

  //===--- Rules (LayoutSpecRules.cpp) -----------------------------------===//

  void parseRules(const Json &value);
  void parseDefault(const Json &value);
  std::optional<Rule> parseRule(const Json &value, const std::string &name,
                                bool isDefault);
  std::optional<IdAxis> parseIdAxis(const Json &value, const char *field,
                                    const char *idName, const char *placeholder,
                                    const char *countField);
  /// Finds the mesh axes a rule's captured ids select on; errors at the
  /// rule.
  bool resolveRuleIds(Rule &rule, const PlacementFields &fields);

  //===--- The key list (LayoutSpecKeyList.cpp) --------------------------===//

  /// Places every key of the key list (and the `tensors` entries for other
  /// keys), in order.
  void placeKeyList();
  /// Finds every key's placement; false when the key list is unusable.
  bool matchKeys();
  void reportUnmatchedKeys(llvm::ArrayRef<size_t> unmatched);
  void reportUnplacedRules();
  /// Counts the ids and splits them over each rule's axis.
  void finishIdAxes();
  void finishIdAxis(IdAxis &axis, bool layers);
  /// Notes how many more keys each rule could not place.
  void reportQuietFailures();
  std::optional<KeyPlacement> placeRuleKey(const Rule &rule,
                                           const KeySource &source,
                                           llvm::ArrayRef<int64_t> shape,
                                           const std::string &keyContext);
  /// The placement of key-list entry `index` (for a state key, its model
  /// key's), or nullopt after reporting why there is none.
  std::optional<KeyPlacement> placementOf(size_t index,
                                          llvm::ArrayRef<int64_t> shape,
                                          const std::string &keyContext);
  const Rule &ruleAt(size_t index) const {
    return index < rules_.size() ? rules_[index] : *default_;
  }

  const std::string &path_;
  uint32_t buffer_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  DiagnosticEngine quietDiags_;
  bool quiet_ = false;
  const LayoutKeyList *keys_;
  JsonLocator locator_;
  unsigned errorsBefore_;
  bool stoppedForErrors_ = false;
  /// The JSON path of the value being read.
  std::vector<JsonPathStep> where_;

  std::optional<DeviceMesh> defaultMesh_;
  std::map<std::string, DeviceMesh, std::less<>> namedMeshes_;
  FilePattern filePattern_;
  /// Suffixes (".moment1_0", ...) to add for every model key.
  std::vector<std::string_view> optimizerSuffixes_;
  /// Every key the spec lists, to catch generated keys that clash.
  std::unordered_set<std::string_view> listedKeys_;
  /// `tensors` entries that could be placed, in spec order.
  std::vector<ListedTensor> listed_;
  std::unordered_map<std::string, size_t> listedIndex_;

  std::vector<Rule> rules_;
  std::optional<Rule> default_;
  bool hasRules_ = false;
  std::optional<IdAxis> stages_, experts_;
  /// Key-list keys, by key, and where each takes its placement from.
  std::unordered_map<std::string_view, size_t> keyIndex_;
  std::vector<KeySource> keySources_;
  /// Sub-meshes of rules on one stage / expert group: (rule, stage, group).
  std::map<std::tuple<const PlacementSpec *, int64_t, int64_t>, DeviceMesh>
      idMeshes_;
  /// Key-list entries whose placement failed (reported once).
  std::vector<bool> placementFailed_;

  std::unordered_map<uint32_t, uint32_t> fileOfRank_;
  std::vector<RankBlock> blocks_;
  ShardMetadataBuilder builder_;
};

//===----------------------------------------------------------------------===//
// Templates
//===----------------------------------------------------------------------===//

template <typename Visit>
void LayoutSpecParser::forEachField(const Json &object,
                                    const std::vector<std::string> &known,
                                    const std::string &context,
                                    const char *objectName, Visit visit) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    Enter member(*this, JsonPathStep::member(it.key()));
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      auto diag = errorAtKey(context + "unknown field " + quoteText(it.key()) +
                             " in " + objectName);
      std::string suggestion = closestSpelling(it.key(), known);
      if (!suggestion.empty())
        diag.hint("did you mean '" + suggestion + "'?");
      else
        diag.hint(std::string("known fields of ") + objectName + ": " +
                  llvm::join(known, ", "));
      continue;
    }
    visit(it.key(), it.value());
  }
}

template <typename T, typename ReadElement>
std::optional<std::vector<T>>
LayoutSpecParser::readList(const Json &value, const std::string &what,
                           const char *elements, const std::string &hint,
                           ReadElement readElement) {
  if (!value.is_array()) {
    error(what + " must be a list of " + elements + ", not " +
          describeJsonValue(value))
        .hint(hint);
    return std::nullopt;
  }
  std::vector<T> out;
  bool ok = true;
  for (size_t i = 0; i < value.size(); ++i) {
    Enter element(*this, JsonPathStep::element(i));
    std::optional<T> item =
        readElement(value[i], what + "[" + std::to_string(i) + "]");
    if (item)
      out.push_back(std::move(*item));
    ok = ok && item.has_value();
  }
  if (!ok)
    return std::nullopt;
  return out;
}

} // namespace layoutspec

} // namespace aoa

#endif // AOA_FORMATS_METADATA_LIB_LAYOUTSPECPARSER_H
