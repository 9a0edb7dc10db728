//===- LayoutSpecLoader.cpp -----------------------------------------------===//
//
// The spec is small next to the metadata it expands into, so it is parsed
// into nlohmann's DOM and walked in a fixed order (meshes before tensors,
// whatever the file's order). The parser keeps the JSON path of the value it
// is reading; a diagnostic finds its place by walking the text along that
// path (JsonLocator).
//
//===----------------------------------------------------------------------===//
#include "aoa/frontend/LayoutSpecLoader.h"

#include "JsonLocator.h"
#include "JsonSupport.h"
#include "aoa/frontend/ConfigLoader.h"
#include "aoa/ir/MeshLayout.h"
#include "aoa/ir/OptimizerState.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace aoa {

namespace {

using Json = nlohmann::ordered_json;

constexpr unsigned kMaxErrors = 20;
/// ShardMetadata stores at most this many dimensions.
constexpr size_t kMaxDims = 255;
/// Mesh definitions nest process ids no deeper than this.
constexpr size_t kMaxMeshDims = 32;

const char *const kSpecHint =
    "a layout spec looks like {\"format\": \"aoa-layout\", \"version\": 1, "
    "\"mesh\": {\"shape\": [2, 4]}, \"tensors\": {KEY: {\"dtype\": "
    "\"bfloat16\", \"global_shape\": [1024, 512], \"dims_mapping\": [-1, 1]}}}";
const char *const kMeshHint =
    "a mesh looks like {\"shape\": [2, 4], \"dim_names\": [\"dp\", \"mp\"]} "
    "or {\"process_mesh\": [[0, 1], [2, 3]]}";
const char *const kPlacementHint =
    "one entry per tensor dimension: a mesh axis number or name, -1 (or "
    "\"None\", null) when not split, or a list of axes";
const char *const kDefaultFilePattern = "rank{rank:05d}.safetensors";

// Field names, in the order they are usually written (function-local
// statics: no static constructors).
const std::vector<std::string> &rootFields() {
  static const std::vector<std::string> fields = {
      "format",       "version",          "mesh",   "meshes",
      "file_pattern", "optimizer_states", "tensors"};
  return fields;
}
const std::vector<std::string> &meshFields() {
  static const std::vector<std::string> fields = {
      "shape",     "device_matrix", "process_mesh",
      "dim_names", "alias_name",    "process_ids"};
  return fields;
}
const std::vector<std::string> &tensorFields() {
  static const std::vector<std::string> fields = {
      "dtype", "global_shape", "dims_mapping", "tensor_map", "mesh", "select"};
  return fields;
}

/// How a JSON value reads in a message.
std::string describe(const Json &value) {
  switch (value.type()) {
  case Json::value_t::string:
    return "a string";
  case Json::value_t::array:
    return "a list";
  case Json::value_t::object:
    return "an object";
  case Json::value_t::boolean:
    return value.get<bool>() ? "true" : "false";
  case Json::value_t::null:
    return "null";
  default:
    return "the number " + value.dump();
  }
}

std::string quote(std::string_view text) {
  constexpr size_t kMaxShown = 200;
  if (text.size() > kMaxShown)
    return "'" + std::string(text.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(text) + "'";
}

/// file_pattern: literal text with `{rank}` or `{rank:0Nd}` placeholders.
class FilePattern {
public:
  /// nullopt and a message for anything else in braces.
  static std::optional<FilePattern> parse(std::string_view text,
                                          std::string &error) {
    FilePattern pattern;
    size_t at = 0;
    while (at < text.size()) {
      size_t open = text.find_first_of("{}", at);
      pattern.pieces_.push_back({std::string(text.substr(at, open - at)), -1});
      if (open == std::string_view::npos)
        break;
      size_t close = text.find('}', open);
      if (text[open] == '}' || close == std::string_view::npos) {
        error = "unbalanced brace in file_pattern " + quote(text);
        return std::nullopt;
      }
      llvm::StringRef field(text.data() + open + 1, close - open - 1);
      int width = 0;
      if (field != "rank") {
        // Python's zero-padded form: rank:05d.
        llvm::StringRef spec = field;
        bool padded = spec.consume_front("rank:0") && spec.consume_back("d") &&
                      !spec.getAsInteger(10, width);
        if (!padded || width < 1 || width > 20) {
          error = "unsupported placeholder {" + field.str() +
                  "} in file_pattern " + quote(text);
          return std::nullopt;
        }
      }
      pattern.pieces_.push_back({{}, width});
      pattern.mentionsRank_ = true;
      at = close + 1;
    }
    return pattern;
  }

  std::string format(uint32_t rank) const {
    std::string out;
    for (const Piece &piece : pieces_) {
      if (piece.width < 0) {
        out += piece.literal;
        continue;
      }
      std::string digits = std::to_string(rank);
      if (digits.size() < static_cast<size_t>(piece.width))
        out.append(static_cast<size_t>(piece.width) - digits.size(), '0');
      out += digits;
    }
    return out;
  }
  bool mentionsRank() const { return mentionsRank_; }

private:
  struct Piece {
    std::string literal;
    int width; ///< < 0: literal; otherwise the rank, zero-padded to width
  };
  std::vector<Piece> pieces_;
  bool mentionsRank_ = false;
};

class LayoutSpecParser {
public:
  LayoutSpecParser(const std::string &path, uint32_t buffer,
                   SourceManager &sources, DiagnosticEngine &diags)
      : path_(path), buffer_(buffer), sources_(sources), diags_(diags),
        locator_(sources.text(buffer)), errorsBefore_(diags.errorCount()) {}

  std::optional<ShardMetadata> parse();

private:
  //===--- Where we are --------------------------------------------------===//

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

  SourceLocation locate(size_t offset) const {
    return sources_.locationForOffset(buffer_, offset);
  }
  /// An error at the current value.
  InFlightDiagnostic error(std::string message) {
    return diags_.error(locate(locator_.valueOffset(where_)),
                        std::move(message));
  }
  /// An error at a value below the current one.
  InFlightDiagnostic errorBelow(llvm::ArrayRef<JsonPathStep> steps,
                                std::string message) {
    std::vector<JsonPathStep> path = where_;
    path.insert(path.end(), steps.begin(), steps.end());
    return diags_.error(locate(locator_.valueOffset(path)), std::move(message));
  }
  /// An error at the key of the current member.
  InFlightDiagnostic errorAtKey(std::string message) {
    return diags_.error(locate(locator_.keyOffset(where_)), std::move(message));
  }
  unsigned errorCount() const { return diags_.errorCount() - errorsBefore_; }

  //===--- Values --------------------------------------------------------===//

  /// Calls visit(name, value) for every member of `object` inside its path;
  /// reports members not in `known`.
  template <typename Visit>
  void forEachField(const Json &object, const std::vector<std::string> &known,
                    const std::string &context, const char *objectName,
                    Visit visit) {
    for (auto it = object.begin(); it != object.end(); ++it) {
      Enter member(*this, JsonPathStep::member(it.key()));
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        auto diag = errorAtKey(context + "unknown field " + quote(it.key()) +
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

  std::optional<int64_t> readInt(const Json &value, const std::string &what,
                                 const std::string &hint) {
    if (!value.is_number_integer()) {
      error(what + " must be an integer, not " + describe(value)).hint(hint);
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

  std::optional<std::string> readString(const Json &value,
                                        const std::string &what,
                                        const std::string &hint) {
    if (value.is_string())
      return value.get<std::string>();
    error(what + " must be a string, not " + describe(value)).hint(hint);
    return std::nullopt;
  }

  /// A list whose elements `readElement(element, "what[i]")` reads.
  template <typename T, typename ReadElement>
  std::optional<std::vector<T>>
  readList(const Json &value, const std::string &what, const char *elements,
           const std::string &hint, ReadElement readElement) {
    if (!value.is_array()) {
      error(what + " must be a list of " + elements + ", not " +
            describe(value))
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

  std::optional<std::vector<int64_t>> readIntList(const Json &value,
                                                  const std::string &what,
                                                  const std::string &hint) {
    return readList<int64_t>(value, what, "integers", hint,
                             [&](const Json &element, const std::string &name) {
                               return readInt(element, name, hint);
                             });
  }

  std::optional<std::vector<std::string>>
  readStringList(const Json &value, const std::string &what,
                 const std::string &hint) {
    return readList<std::string>(
        value, what, "strings", hint,
        [&](const Json &element, const std::string &name) {
          return readString(element, name, hint);
        });
  }

  //===--- The document --------------------------------------------------===//

  bool checkHeader(const Json *format, const Json *version);
  std::optional<DeviceMesh> parseMesh(const Json &value,
                                      const std::string &context);
  /// Reads Paddle's nested process_mesh into a shape and row-major ids.
  bool readProcessMesh(const Json &value, const std::string &context,
                       std::vector<int64_t> &shape, std::vector<int64_t> &ids);
  bool walkProcessMesh(const Json &value, const std::string &context,
                       const char *hint, llvm::ArrayRef<int64_t> shape,
                       std::vector<int64_t> &ids);
  /// Reports a mesh error at the field it is about.
  void reportMeshError(const LayoutError &problem, const std::string &context,
                       const std::string &shapeField,
                       const std::string &namesField, bool nestedIds,
                       llvm::ArrayRef<int64_t> shape);
  void parseMeshes(const Json &value);
  void parseFilePattern(const Json &value);
  void parseOptimizerStates(const Json &value);
  void parseTensors(const Json &value);
  void parseTensor(const std::string &key, const Json &value);
  /// The mesh a tensor names (or inlines), before any select.
  std::optional<DeviceMesh> tensorMesh(const Json *value,
                                       const std::string &context,
                                       const DeviceMesh *&shared);
  bool applySelect(const Json &value, const std::string &context,
                   std::optional<DeviceMesh> &own, const DeviceMesh *&mesh);
  std::optional<std::vector<DimPlacementSpelling>>
  readPlacement(const Json &value, const std::string &what);
  void addTensor(const std::string &key, DType dtype,
                 llvm::ArrayRef<int64_t> globalShape, const DeviceMesh &mesh,
                 const TensorPlacement &placement);
  void addOptimizerStates(const std::string &key, DType dtype,
                          llvm::ArrayRef<int64_t> globalShape,
                          const DeviceMesh &mesh,
                          const TensorPlacement &placement);
  uint32_t fileId(uint32_t rank);

  const std::string &path_;
  uint32_t buffer_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  JsonLocator locator_;
  unsigned errorsBefore_;
  /// The JSON path of the value being read.
  std::vector<JsonPathStep> where_;

  std::optional<DeviceMesh> defaultMesh_;
  std::map<std::string, DeviceMesh, std::less<>> namedMeshes_;
  FilePattern filePattern_;
  /// Suffixes (".moment1_0", ...) to add for every model key.
  std::vector<std::string_view> optimizerSuffixes_;
  /// Every key the spec lists, to catch generated keys that clash.
  std::unordered_set<std::string_view> listedKeys_;
  std::unordered_map<uint32_t, uint32_t> fileOfRank_;
  std::vector<RankBlock> blocks_;
  ShardMetadataBuilder builder_;
};

std::optional<ShardMetadata> LayoutSpecParser::parse() {
  std::optional<Json> parsed =
      parseJsonBuffer(sources_, buffer_, diags_, "in layout spec", kSpecHint);
  if (!parsed)
    return std::nullopt;
  const Json &root = *parsed;
  if (std::optional<JsonLocator::DuplicateKey> duplicate =
          locator_.firstDuplicateKey()) {
    diags_
        .error(locate(duplicate->offset),
               "key " + quote(duplicate->key) + " appears twice in one object")
        .note(locate(duplicate->firstOffset), "first given here")
        .hint("give each key once");
    return std::nullopt;
  }
  if (!root.is_object()) {
    error("a layout spec must be a JSON object, not " + describe(root))
        .hint(kSpecHint);
    return std::nullopt;
  }

  std::map<std::string, const Json *> fields;
  forEachField(root, rootFields(), "", "the layout spec",
               [&](const std::string &name, const Json &value) {
                 fields[name] = &value;
               });
  auto field = [&](const char *name) -> const Json * {
    auto it = fields.find(name);
    return it == fields.end() ? nullptr : it->second;
  };
  bool headerOk = checkHeader(field("format"), field("version"));
  if (const Json *mesh = field("mesh")) {
    Enter enter(*this, JsonPathStep::member("mesh"));
    defaultMesh_ = parseMesh(*mesh, "mesh: ");
  }
  if (const Json *meshes = field("meshes")) {
    Enter enter(*this, JsonPathStep::member("meshes"));
    parseMeshes(*meshes);
  }
  if (const Json *pattern = field("file_pattern")) {
    Enter enter(*this, JsonPathStep::member("file_pattern"));
    parseFilePattern(*pattern);
  } else {
    std::string ignored;
    filePattern_ = *FilePattern::parse(kDefaultFilePattern, ignored);
  }
  if (const Json *states = field("optimizer_states")) {
    Enter enter(*this, JsonPathStep::member("optimizer_states"));
    parseOptimizerStates(*states);
  }
  const Json *tensors = field("tensors");
  if (!tensors) {
    error("the layout spec is missing the field 'tensors'").hint(kSpecHint);
  } else if (headerOk && errorCount() == 0) {
    // Tensors are expanded only once everything they refer to is valid;
    // otherwise one bad mesh would be reported once per tensor.
    Enter enter(*this, JsonPathStep::member("tensors"));
    parseTensors(*tensors);
  }
  if (errorCount() != 0)
    return std::nullopt;

  // Without {rank} every process would write the same file.
  if (!filePattern_.mentionsRank() && fileOfRank_.size() > 1) {
    Enter enter(*this, JsonPathStep::member("file_pattern"));
    error("file_pattern " + quote(filePattern_.format(0)) +
          " names the same file for all " + std::to_string(fileOfRank_.size()) +
          " ranks")
        .hint("put {rank} or {rank:05d} in the file name");
    return std::nullopt;
  }
  return builder_.finish();
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
            (format->is_string() ? quote(format->get<std::string>())
                                 : describe(*format)))
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
// Meshes
//===----------------------------------------------------------------------===//

std::optional<DeviceMesh>
LayoutSpecParser::parseMesh(const Json &value, const std::string &context) {
  if (!value.is_object()) {
    error(context + "a mesh must be an object, not " + describe(value))
        .hint(kMeshHint);
    return std::nullopt;
  }
  unsigned errors = errorCount();
  const Json *shapeValue = nullptr, *namesValue = nullptr, *idsValue = nullptr,
             *nestedValue = nullptr;
  std::string shapeField, namesField, idsField, nestedField;
  // Paddle and MindSpore spell the same fields differently; one of each.
  auto takeOne = [&](const Json *&slot, std::string &slotName,
                     const std::string &name, const Json &fieldValue) {
    if (slot) {
      errorAtKey(context + "'" + name + "' and '" + slotName +
                 "' say the same thing")
          .hint("give one of them");
      return;
    }
    slot = &fieldValue;
    slotName = name;
  };
  forEachField(value, meshFields(), context, "a mesh",
               [&](const std::string &name, const Json &fieldValue) {
                 if (name == "shape" || name == "device_matrix")
                   takeOne(shapeValue, shapeField, name, fieldValue);
                 else if (name == "dim_names" || name == "alias_name")
                   takeOne(namesValue, namesField, name, fieldValue);
                 else if (name == "process_ids")
                   takeOne(idsValue, idsField, name, fieldValue);
                 else
                   takeOne(nestedValue, nestedField, name, fieldValue);
               });
  if (nestedValue && (shapeValue || idsValue)) {
    Enter enter(*this, JsonPathStep::member("process_mesh"));
    errorAtKey(context +
               "'process_mesh' gives the mesh's shape and process "
               "ids; '" +
               (shapeValue ? shapeField : idsField) + "' cannot go with it")
        .hint("drop one of them");
  }
  if (!shapeValue && !idsValue && !nestedValue)
    error(context + "a mesh needs 'shape' (or 'device_matrix'), "
                    "'process_mesh' or 'process_ids'")
        .hint(kMeshHint);
  if (errorCount() != errors)
    return std::nullopt;

  std::vector<int64_t> shape, ids;
  std::vector<std::string> names;
  bool ok = true;
  if (nestedValue) {
    Enter enter(*this, JsonPathStep::member("process_mesh"));
    ok = readProcessMesh(*nestedValue, context, shape, ids);
  }
  if (shapeValue) {
    Enter enter(*this, JsonPathStep::member(shapeField));
    std::optional<std::vector<int64_t>> read = readIntList(
        *shapeValue, context + shapeField,
        "the number of processes along each mesh axis, e.g. [2, 4]");
    ok = ok && read;
    if (read)
      shape = std::move(*read);
  }
  if (idsValue) {
    Enter enter(*this, JsonPathStep::member("process_ids"));
    std::optional<std::vector<int64_t>> read =
        readIntList(*idsValue, context + "process_ids",
                    "the rank at every mesh coordinate, row-major");
    ok = ok && read;
    if (read)
      ids = std::move(*read);
    // A bare list of ranks is a one-axis mesh.
    if (read && !shapeValue) {
      shape = {static_cast<int64_t>(ids.size())};
      if (ids.empty()) {
        error(context + "process_ids must list at least one rank")
            .hint("the rank at every mesh coordinate, row-major");
        ok = false;
      }
    }
  }
  if (namesValue) {
    Enter enter(*this, JsonPathStep::member(namesField));
    std::optional<std::vector<std::string>> read =
        readStringList(*namesValue, context + namesField,
                       "one name per mesh axis, e.g. [\"dp\", \"mp\"]");
    ok = ok && read;
    if (read)
      names = std::move(*read);
  }
  if (!ok)
    return std::nullopt;
  LayoutError problem;
  std::vector<int64_t> shapeCopy = shape;
  std::optional<DeviceMesh> mesh = DeviceMesh::create(
      std::move(shape), std::move(names), std::move(ids), &problem);
  if (!mesh)
    reportMeshError(problem, context, nestedValue ? "" : shapeField, namesField,
                    nestedValue != nullptr, shapeCopy);
  return mesh;
}

bool LayoutSpecParser::readProcessMesh(const Json &value,
                                       const std::string &context,
                                       std::vector<int64_t> &shape,
                                       std::vector<int64_t> &ids) {
  const char *hint = "process_mesh is a nested list of ranks, e.g. "
                     "[[0, 1], [2, 3], [4, 5]]";
  if (!value.is_array() || value.empty()) {
    error(context +
          "process_mesh must be a non-empty nested list of ranks, "
          "not " +
          (value.is_array() ? std::string("[]") : describe(value)))
        .hint(hint);
    return false;
  }
  // The shape is the lengths along the first elements; every other list
  // must agree with it.
  for (const Json *inner = &value; inner->is_array(); inner = &(*inner)[0]) {
    if (inner->empty() || shape.size() == kMaxMeshDims)
      break;
    shape.push_back(static_cast<int64_t>(inner->size()));
  }
  // Iterative walk over the lists, in row-major order; where_ follows it
  // and is restored on every exit.
  size_t depth = where_.size();
  bool ok = walkProcessMesh(value, context, hint, shape, ids);
  where_.resize(depth);
  return ok;
}

bool LayoutSpecParser::walkProcessMesh(const Json &value,
                                       const std::string &context,
                                       const char *hint,
                                       llvm::ArrayRef<int64_t> shape,
                                       std::vector<int64_t> &ids) {
  struct Frame {
    const Json *value;
    size_t depth;
    size_t next;
  };
  std::vector<Frame> stack{{&value, 0, 0}};
  while (!stack.empty()) {
    Frame &frame = stack.back();
    if (frame.depth == shape.size()) {
      std::optional<int64_t> id =
          readInt(*frame.value, context + "a process id", hint);
      if (!id)
        return false;
      ids.push_back(*id);
      stack.pop_back();
      where_.pop_back();
      continue;
    }
    if (frame.next == 0 &&
        (!frame.value->is_array() ||
         frame.value->size() != static_cast<size_t>(shape[frame.depth]))) {
      error(context + "process_mesh is not rectangular: expected a list of " +
            std::to_string(shape[frame.depth]) + " here, not " +
            (frame.value->is_array()
                 ? "a list of " + std::to_string(frame.value->size())
                 : describe(*frame.value)))
          .hint(hint);
      return false;
    }
    if (frame.next == frame.value->size()) {
      stack.pop_back();
      if (!stack.empty())
        where_.pop_back();
      continue;
    }
    size_t index = frame.next++;
    where_.push_back(JsonPathStep::element(index));
    stack.push_back(Frame{&(*frame.value)[index], frame.depth + 1, 0});
  }
  return true;
}

void LayoutSpecParser::reportMeshError(const LayoutError &problem,
                                       const std::string &context,
                                       const std::string &shapeField,
                                       const std::string &namesField,
                                       bool nestedIds,
                                       llvm::ArrayRef<int64_t> shape) {
  std::vector<JsonPathStep> steps;
  switch (problem.input) {
  case LayoutInput::MeshShape:
    steps.push_back(
        JsonPathStep::member(shapeField.empty() ? "process_mesh" : shapeField));
    if (problem.entry && !shapeField.empty())
      steps.push_back(JsonPathStep::element(*problem.entry));
    break;
  case LayoutInput::AxisNames:
    steps.push_back(JsonPathStep::member(namesField));
    if (problem.entry)
      steps.push_back(JsonPathStep::element(*problem.entry));
    break;
  case LayoutInput::ProcessIds:
    if (!nestedIds) {
      steps.push_back(JsonPathStep::member("process_ids"));
      if (problem.entry)
        steps.push_back(JsonPathStep::element(*problem.entry));
      break;
    }
    // The nested list's element at the row-major position `entry`.
    steps.push_back(JsonPathStep::member("process_mesh"));
    if (problem.entry) {
      std::vector<int64_t> strides = rowMajorStrides(shape);
      for (size_t i = 0; i < shape.size(); ++i)
        steps.push_back(JsonPathStep::element(static_cast<size_t>(
            (static_cast<int64_t>(*problem.entry) / strides[i]) % shape[i])));
    }
    break;
  case LayoutInput::Whole:
  case LayoutInput::Placement:
    break;
  }
  errorBelow(steps, context + problem.message).hint(problem.hint);
}

void LayoutSpecParser::parseMeshes(const Json &value) {
  if (!value.is_object()) {
    error("'meshes' must be an object mapping names to meshes, not " +
          describe(value))
        .hint("e.g. \"meshes\": {\"stage0\": {\"shape\": [4]}}");
    return;
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    Enter enter(*this, JsonPathStep::member(it.key()));
    if (std::optional<DeviceMesh> mesh =
            parseMesh(it.value(), "mesh " + quote(it.key()) + ": "))
      namedMeshes_.emplace(it.key(), std::move(*mesh));
  }
}

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
      error("unknown optimizer state " + quote((*names)[i]))
          .hint(suggestion.empty() ? hint
                                   : "did you mean '" + suggestion + "'?");
      continue;
    }
    std::string_view suffix = kOptimizerSuffixes[it - known.begin()];
    if (std::find(optimizerSuffixes_.begin(), optimizerSuffixes_.end(),
                  suffix) != optimizerSuffixes_.end()) {
      error("optimizer state " + quote((*names)[i]) + " is listed twice")
          .hint("list each state once");
      continue;
    }
    optimizerSuffixes_.push_back(suffix);
  }
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

void LayoutSpecParser::parseTensors(const Json &value) {
  if (!value.is_object()) {
    error("'tensors' must be an object mapping keys to tensors, not " +
          describe(value))
        .hint(kSpecHint);
    return;
  }
  for (auto it = value.begin(); it != value.end(); ++it)
    listedKeys_.insert(it.key());
  builder_.reserve(value.size() * (1 + optimizerSuffixes_.size()), 0, 0);
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (errorCount() >= kMaxErrors) {
      error("too many errors in layout spec '" + path_ + "'; stopped after " +
            std::to_string(kMaxErrors))
          .hint("fix the errors above and run again");
      return;
    }
    Enter enter(*this, JsonPathStep::member(it.key()));
    parseTensor(it.key(), it.value());
  }
}

void LayoutSpecParser::parseTensor(const std::string &key, const Json &value) {
  std::string context = "tensor " + quote(key) + ": ";
  if (key.empty()) {
    errorAtKey("a tensor key cannot be empty").hint("name the tensor");
    return;
  }
  if (!value.is_object()) {
    error(context + "a tensor must be an object, not " + describe(value))
        .hint("a tensor has \"dtype\", \"global_shape\" and \"dims_mapping\" "
              "or \"tensor_map\"");
    return;
  }
  unsigned errors = errorCount();
  std::optional<DType> dtype;
  std::optional<std::vector<int64_t>> globalShape;
  const Json *placementValue = nullptr, *meshValue = nullptr,
             *selectValue = nullptr;
  std::string placementField;
  forEachField(
      value, tensorFields(), context, "a tensor",
      [&](const std::string &name, const Json &fieldValue) {
        if (name == "dtype") {
          std::optional<std::string> text =
              readString(fieldValue, context + "dtype",
                         "a dtype name such as \"bfloat16\"");
          if (!text)
            return;
          dtype = parseDTypeName(*text);
          if (!dtype)
            dtype = parseSafetensorsDTypeName(*text);
          if (!dtype)
            error(context + "unknown dtype " + quote(*text))
                .hint("dtypes: " + std::string(allDTypeNames()));
        } else if (name == "global_shape") {
          globalShape = readIntList(fieldValue, context + "global_shape",
                                    "the tensor's extents, e.g. [1024, 512]");
        } else if (name == "dims_mapping" || name == "tensor_map") {
          if (placementValue) {
            errorAtKey(context + "both 'dims_mapping' and 'tensor_map' are "
                                 "given")
                .hint("dims_mapping numbers mesh axes from the left (Paddle), "
                      "tensor_map from the right (MindSpore); give one");
            return;
          }
          placementValue = &fieldValue;
          placementField = name;
        } else if (name == "mesh") {
          meshValue = &fieldValue;
        } else {
          selectValue = &fieldValue;
        }
      });
  for (const char *required : {"dtype", "global_shape"})
    if (!value.contains(required))
      errorAtKey(context + "missing the field '" + required + "'")
          .hint("a tensor has \"dtype\", \"global_shape\" and \"dims_mapping\" "
                "or \"tensor_map\"");
  if (!placementValue)
    errorAtKey(context + "no placement: give 'dims_mapping' or 'tensor_map'")
        .hint("dims_mapping [-1, 1] (Paddle) splits dimension 1 over mesh "
              "axis 1; tensor_map [-1, 0] (MindSpore) says the same on a "
              "2-axis mesh");
  if (globalShape) {
    Enter enter(*this, JsonPathStep::member("global_shape"));
    unsigned shapeErrors = errorCount();
    for (size_t i = 0; i < globalShape->size(); ++i)
      if ((*globalShape)[i] < 0) {
        Enter element(*this, JsonPathStep::element(i));
        error(context + "global_shape[" + std::to_string(i) + "] is " +
              std::to_string((*globalShape)[i]) +
              "; extents cannot be negative")
            .hint("the tensor's extents, e.g. [1024, 512]");
      }
    if (globalShape->size() > kMaxDims)
      error(context + "global_shape has " +
            std::to_string(globalShape->size()) + " dimensions; at most " +
            std::to_string(kMaxDims) + " are supported")
          .hint("check the shape");
    else if (errorCount() == shapeErrors && !elementCount(*globalShape))
      error(context + "global_shape " + formatShape(*globalShape) +
            " has more elements than an int64 can count")
          .hint("check the shape");
  }
  if (errorCount() != errors)
    return;

  // The mesh: named, inline or the default, then narrowed by select.
  const DeviceMesh *mesh = nullptr;
  std::optional<DeviceMesh> own = tensorMesh(meshValue, context, mesh);
  if (own)
    mesh = &*own;
  if (!mesh || (selectValue && !applySelect(*selectValue, context, own, mesh)))
    return;

  std::optional<std::vector<DimPlacementSpelling>> entries;
  {
    Enter enter(*this, JsonPathStep::member(placementField));
    entries = readPlacement(*placementValue, context + placementField);
  }
  if (!entries)
    return;
  AxisNumbering numbering = placementField == "dims_mapping"
                                ? AxisNumbering::FromLeft
                                : AxisNumbering::FromRight;
  LayoutError problem;
  std::optional<TensorPlacement> placement = TensorPlacement::resolve(
      *mesh, *globalShape, *entries, numbering, &problem);
  if (!placement) {
    Enter enter(*this, JsonPathStep::member(placementField));
    std::vector<JsonPathStep> steps;
    if (problem.entry) {
      steps.push_back(JsonPathStep::element(*problem.entry));
      if (problem.item && (*placementValue)[*problem.entry].is_array())
        steps.push_back(JsonPathStep::element(*problem.item));
    }
    errorBelow(steps, context + problem.message).hint(problem.hint);
    return;
  }
  addTensor(key, *dtype, *globalShape, *mesh, *placement);
  if (splitOptimizerSuffix(key).second.empty())
    addOptimizerStates(key, *dtype, *globalShape, *mesh, *placement);
}

std::optional<DeviceMesh>
LayoutSpecParser::tensorMesh(const Json *value, const std::string &context,
                             const DeviceMesh *&shared) {
  shared = nullptr;
  if (!value) {
    if (defaultMesh_) {
      shared = &*defaultMesh_;
      return std::nullopt;
    }
    errorAtKey(context + "no mesh: the tensor names none and the spec has no "
                         "default 'mesh'")
        .hint("give the spec a \"mesh\", or the tensor a \"mesh\" (a name "
              "from \"meshes\" or a mesh object)");
    return std::nullopt;
  }
  Enter enter(*this, JsonPathStep::member("mesh"));
  if (value->is_object())
    return parseMesh(*value, context);
  if (!value->is_string()) {
    error(context +
          "'mesh' must be the name of a mesh in 'meshes' or a mesh "
          "object, not " +
          describe(*value))
        .hint(kMeshHint);
    return std::nullopt;
  }
  const std::string &name = value->get_ref<const std::string &>();
  auto it = namedMeshes_.find(name);
  if (it != namedMeshes_.end()) {
    shared = &it->second;
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const auto &entry : namedMeshes_)
    names.push_back(entry.first);
  std::string suggestion = closestSpelling(name, names);
  error(context + "unknown mesh " + quote(name))
      .hint(!suggestion.empty() ? "did you mean '" + suggestion + "'?"
            : names.empty()     ? std::string("define it under \"meshes\"")
                                : "meshes are " + llvm::join(names, ", "));
  return std::nullopt;
}

bool LayoutSpecParser::applySelect(const Json &value,
                                   const std::string &context,
                                   std::optional<DeviceMesh> &own,
                                   const DeviceMesh *&mesh) {
  Enter enter(*this, JsonPathStep::member("select"));
  const char *hint = "select maps mesh axis names to indices, e.g. "
                     "{\"pp\": 1}: the tensor lives on that slice of the mesh";
  if (!value.is_object()) {
    error(context + "'select' must be an object, not " + describe(value))
        .hint(hint);
    return false;
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    Enter member(*this, JsonPathStep::member(it.key()));
    std::optional<unsigned> axis = mesh->findAxis(it.key());
    if (!axis) {
      std::vector<std::string> names(mesh->axisNames().begin(),
                                     mesh->axisNames().end());
      std::string suggestion = closestSpelling(it.key(), names);
      errorAtKey(context + "cannot select on unknown mesh axis " +
                 quote(it.key()))
          .hint(!suggestion.empty() ? "did you mean '" + suggestion + "'?"
                : names.empty()
                    ? std::string("name the mesh's axes with dim_names")
                    : "mesh axes are named " + llvm::join(names, ", "));
      return false;
    }
    std::optional<int64_t> index =
        readInt(it.value(), context + "select[" + quote(it.key()) + "]", hint);
    if (!index)
      return false;
    LayoutError problem;
    std::optional<DeviceMesh> narrowed = mesh->select(*axis, *index, &problem);
    if (!narrowed) {
      error(context + problem.message).hint(problem.hint);
      return false;
    }
    own = std::move(narrowed);
    mesh = &*own;
  }
  return true;
}

std::optional<std::vector<DimPlacementSpelling>>
LayoutSpecParser::readPlacement(const Json &value, const std::string &what) {
  auto readAxis = [&](const Json &item, const std::string &name,
                      DimPlacementSpelling &out) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
      return true;
    }
    if (item.is_number_integer()) {
      std::optional<int64_t> index = readInt(item, name, kPlacementHint);
      if (index)
        out.push_back(*index);
      return index.has_value();
    }
    error(name + " must be a mesh axis number or name, not " + describe(item))
        .hint(kPlacementHint);
    return false;
  };
  return readList<DimPlacementSpelling>(
      value, what, "entries", kPlacementHint,
      [&](const Json &entry,
          const std::string &name) -> std::optional<DimPlacementSpelling> {
        DimPlacementSpelling spelling;
        if (entry.is_null())
          return spelling; // not split
        if (!entry.is_array())
          return readAxis(entry, name, spelling)
                     ? std::optional<DimPlacementSpelling>(spelling)
                     : std::nullopt;
        for (size_t i = 0; i < entry.size(); ++i) {
          Enter element(*this, JsonPathStep::element(i));
          if (!readAxis(entry[i], name + "[" + std::to_string(i) + "]",
                        spelling))
            return std::nullopt;
        }
        return spelling;
      });
}

uint32_t LayoutSpecParser::fileId(uint32_t rank) {
  auto [it, inserted] = fileOfRank_.emplace(rank, 0);
  if (inserted)
    it->second = builder_.internFile(filePattern_.format(rank));
  return it->second;
}

void LayoutSpecParser::addTensor(const std::string &key, DType dtype,
                                 llvm::ArrayRef<int64_t> globalShape,
                                 const DeviceMesh &mesh,
                                 const TensorPlacement &placement) {
  std::optional<TensorId> tensor = builder_.addTensor(key, dtype, globalShape);
  if (!tensor) {
    errorAtKey("tensor " + quote(key) + " is given twice")
        .hint("give each key once");
    return;
  }
  uint32_t name = builder_.keyNameId(*tensor);
  blocks_ = expandPlacement(mesh, placement, globalShape);
  // Shards in rank order: the order readers of the metadata expect.
  std::stable_sort(
      blocks_.begin(), blocks_.end(),
      [](const RankBlock &a, const RankBlock &b) { return a.rank < b.rank; });
  for (const RankBlock &block : blocks_)
    builder_.addShard(block.rank, fileId(block.rank), name, block.box.offsets(),
                      block.box.shape());
}

void LayoutSpecParser::addOptimizerStates(const std::string &key, DType dtype,
                                          llvm::ArrayRef<int64_t> globalShape,
                                          const DeviceMesh &mesh,
                                          const TensorPlacement &placement) {
  for (std::string_view suffix : optimizerSuffixes_) {
    // Paddle keeps an fp32 master weight only for 16-bit parameters.
    if (suffix == ".w_0" && dtype != DType::F16 && dtype != DType::BF16)
      continue;
    std::string stateKey = key + std::string(suffix);
    if (listedKeys_.count(stateKey)) {
      // Point at the listed key: a sibling of the one being read.
      where_.back() = JsonPathStep::member(stateKey);
      errorAtKey("tensor " + quote(stateKey) +
                 " is listed, but 'optimizer_states' also makes it from " +
                 quote(key))
          .hint("remove it from 'tensors', or '" +
                std::string(suffix.substr(1)) + "' from 'optimizer_states'");
      where_.back() = JsonPathStep::member(key);
      continue;
    }
    // The beta-pow accumulators are one number, kept by every process.
    if (isBetaPowSuffix(suffix))
      addTensor(stateKey, DType::F32, {1}, mesh,
                TensorPlacement::replicated(1));
    else
      addTensor(stateKey, DType::F32, globalShape, mesh, placement);
  }
}

} // namespace

std::optional<ShardMetadata> loadLayoutSpecText(const std::string &path,
                                                std::string text,
                                                SourceManager &sources,
                                                DiagnosticEngine &diags) {
  uint32_t buffer = sources.addBuffer(path, std::move(text));
  return LayoutSpecParser(path, buffer, sources, diags).parse();
}

std::optional<ShardMetadata> loadLayoutSpec(const std::string &path,
                                            SourceManager &sources,
                                            DiagnosticEngine &diags) {
  std::string text;
  if (std::optional<std::string> failure = readFileToString(path, text)) {
    diags
        .error(SourceLocation{},
               "cannot read layout spec '" + path + "': " + *failure)
        .hint("pass the path of a layout spec (docs/layouts.md)");
    return std::nullopt;
  }
  return loadLayoutSpecText(path, std::move(text), sources, diags);
}

} // namespace aoa
