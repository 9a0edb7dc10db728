//===- LayoutSpecMeshes.cpp - The meshes of layout specs ------------------===//
//
// A mesh as Paddle writes it (`shape` and `dim_names`, or a nested
// `process_mesh` of ranks) or as MindSpore does (`device_matrix` and
// `alias_name`, with `process_ids`), read into a DeviceMesh; the spec's
// `mesh` and its named `meshes`. Problems DeviceMesh finds are reported at
// the entry they are about.
//
//===----------------------------------------------------------------------===//
#include "LayoutSpecParser.h"
#include "LayoutSpecStrings.h"

namespace aoa {

namespace layoutspec {

std::optional<DeviceMesh>
LayoutSpecParser::parseMesh(const Json &value, const std::string &context) {
  if (!value.is_object()) {
    error(context + "a mesh must be an object, not " + describeJsonValue(value))
        .hint(kMeshHint);
    return std::nullopt;
  }
  MeshFields fields;
  if (!findMeshFields(value, context, fields))
    return std::nullopt;
  return readMesh(fields, context);
}

bool LayoutSpecParser::findMeshFields(const Json &value,
                                      const std::string &context,
                                      MeshFields &fields) {
  unsigned errors = errorCount();
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
                   takeOne(fields.shape, fields.shapeField, name, fieldValue);
                 else if (name == "dim_names" || name == "alias_name")
                   takeOne(fields.names, fields.namesField, name, fieldValue);
                 else if (name == "process_ids")
                   takeOne(fields.ids, fields.idsField, name, fieldValue);
                 else
                   takeOne(fields.nested, fields.nestedField, name, fieldValue);
               });
  if (fields.nested && (fields.shape || fields.ids)) {
    Enter enter(*this, JsonPathStep::member("process_mesh"));
    errorAtKey(context +
               "'process_mesh' gives the mesh's shape and process "
               "ids; '" +
               (fields.shape ? fields.shapeField : fields.idsField) +
               "' cannot go with it")
        .hint("drop one of them");
  }
  if (!fields.shape && !fields.ids && !fields.nested)
    error(context + "a mesh needs 'shape' (or 'device_matrix'), "
                    "'process_mesh' or 'process_ids'")
        .hint(kMeshHint);
  return errorCount() == errors;
}

std::optional<DeviceMesh>
LayoutSpecParser::readMesh(const MeshFields &fields,
                           const std::string &context) {
  std::vector<int64_t> shape, ids;
  std::vector<std::string> names;
  bool ok = true;
  if (fields.nested) {
    Enter enter(*this, JsonPathStep::member("process_mesh"));
    ok = readProcessMesh(*fields.nested, context, shape, ids);
  }
  if (fields.shape) {
    Enter enter(*this, JsonPathStep::member(fields.shapeField));
    std::optional<std::vector<int64_t>> read = readIntList(
        *fields.shape, context + fields.shapeField,
        "the number of processes along each mesh axis, e.g. [2, 4]");
    ok = ok && read;
    if (read)
      shape = std::move(*read);
  }
  if (fields.ids) {
    Enter enter(*this, JsonPathStep::member("process_ids"));
    std::optional<std::vector<int64_t>> read =
        readIntList(*fields.ids, context + "process_ids",
                    "the rank at every mesh coordinate, row-major");
    ok = ok && read;
    if (read)
      ids = std::move(*read);
    // A bare list of ranks is a one-axis mesh.
    if (read && !fields.shape) {
      shape = {static_cast<int64_t>(ids.size())};
      if (ids.empty()) {
        error(context + "process_ids must list at least one rank")
            .hint("the rank at every mesh coordinate, row-major");
        ok = false;
      }
    }
  }
  if (fields.names) {
    Enter enter(*this, JsonPathStep::member(fields.namesField));
    std::optional<std::vector<std::string>> read =
        readStringList(*fields.names, context + fields.namesField,
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
    reportMeshError(problem, context, fields.nested ? "" : fields.shapeField,
                    fields.namesField, fields.nested != nullptr, shapeCopy);
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
          (value.is_array() ? std::string("[]") : describeJsonValue(value)))
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
                 : describeJsonValue(*frame.value)))
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
          describeJsonValue(value))
        .hint("e.g. \"meshes\": {\"stage0\": {\"shape\": [4]}}");
    return;
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    Enter enter(*this, JsonPathStep::member(it.key()));
    if (std::optional<DeviceMesh> mesh =
            parseMesh(it.value(), "mesh " + quoteText(it.key()) + ": "))
      namedMeshes_.emplace(it.key(), std::move(*mesh));
  }
}

} // namespace layoutspec

} // namespace aoa
