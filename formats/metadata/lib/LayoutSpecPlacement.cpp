//===- LayoutSpecPlacement.cpp - Placements of layout specs ---------------===//
//
// A placement is written the same way in a `tensors` entry, a rule and the
// default: a mapping (dims_mapping or tensor_map), `"replicate": true`, or
// `"flat": AXIS` (alone or with a mapping), on the spec's mesh, a named or
// inline one, narrowed by `select`. It is read once (PlacementSpec) and
// resolved for every key it places (placeKey), whose shape it must fit.
// The `tensors` entries and the shards of placed tensors are in
// LayoutSpecTensors.cpp.
//
//===----------------------------------------------------------------------===//
#include "LayoutSpecParser.h"
#include "LayoutSpecStrings.h"

namespace aoa {

namespace layoutspec {

//===----------------------------------------------------------------------===//
// Reading a placement
//===----------------------------------------------------------------------===//

bool LayoutSpecParser::takePlacementField(const std::string &name,
                                          const Json &value,
                                          const std::string &context,
                                          PlacementFields &fields) {
  if (name == "dims_mapping" || name == "tensor_map") {
    if (fields.mapping) {
      errorAtKey(context + "both 'dims_mapping' and 'tensor_map' are given")
          .hint("dims_mapping numbers mesh axes from the left (Paddle), "
                "tensor_map from the right (MindSpore); give one");
      return true;
    }
    fields.mapping = &value;
    fields.mappingField = name;
  } else if (name == "mesh") {
    fields.mesh = &value;
  } else if (name == "select") {
    fields.select = &value;
  } else if (name == "replicate") {
    fields.replicate = &value;
  } else if (name == "flat") {
    fields.flat = &value;
  } else {
    return false;
  }
  return true;
}

bool LayoutSpecParser::checkPlacementFields(const PlacementFields &fields,
                                            const std::string &context) {
  bool ok = true;
  if (fields.replicate) {
    Enter enter(*this, JsonPathStep::member("replicate"));
    if (!fields.replicate->is_boolean() || !fields.replicate->get<bool>()) {
      error(context + "'replicate' must be true, not " +
            describeJsonValue(*fields.replicate))
          .hint("leave it out, and give 'dims_mapping' or 'tensor_map'");
      ok = false;
    } else if (fields.mapping || fields.flat) {
      errorAtKey(context + "'replicate' cannot go with '" +
                 (fields.mapping ? fields.mappingField : std::string("flat")) +
                 "'")
          .hint("a replicated tensor is whole on every process; give one of "
                "them");
      ok = false;
    }
  }
  if (!fields.mapping && !fields.replicate && !fields.flat) {
    errorAtKey(context + "no placement: give 'dims_mapping' or 'tensor_map'")
        .hint("dims_mapping [-1, 1] (Paddle) splits dimension 1 over mesh "
              "axis 1; tensor_map [-1, 0] (MindSpore) says the same on a "
              "2-axis mesh; \"replicate\": true keeps the tensor whole on "
              "every process");
    ok = false;
  }
  return ok;
}

bool LayoutSpecParser::readPlacementSpec(const PlacementFields &fields,
                                         const std::string &context,
                                         PlacementSpec &spec) {
  spec.path = where_;
  spec.context = context;
  // The mesh: named, inline or the default, then narrowed by select.
  spec.ownMesh = tensorMesh(fields.mesh, context, spec.sharedMesh);
  if (!spec.ownMesh && !spec.sharedMesh)
    return false;
  if (fields.select) {
    const DeviceMesh *mesh = &spec.mesh();
    std::optional<DeviceMesh> own;
    if (!applySelect(*fields.select, context, own, mesh))
      return false;
    spec.ownMesh = std::move(own);
    spec.sharedMesh = nullptr;
  }
  if (fields.mapping) {
    Enter enter(*this, JsonPathStep::member(fields.mappingField));
    std::optional<std::vector<DimPlacementSpelling>> entries =
        readPlacement(*fields.mapping, context + fields.mappingField);
    if (!entries)
      return false;
    spec.entries = std::move(*entries);
    spec.mappingField = fields.mappingField;
    spec.mappingValue = fields.mapping;
  }
  if (fields.flat) {
    Enter enter(*this, JsonPathStep::member("flat"));
    spec.flatAxis = readFlatAxis(*fields.flat, spec.mesh(), context);
    if (!spec.flatAxis)
      return false;
  }
  return true;
}

std::optional<unsigned>
LayoutSpecParser::readFlatAxis(const Json &value, const DeviceMesh &mesh,
                               const std::string &context) {
  const char *hint = "\"flat\": AXIS (a mesh axis name, or its number from "
                     "the left) spreads every tensor's flattened elements "
                     "over that axis";
  if (value.is_string()) {
    const std::string &name = value.get_ref<const std::string &>();
    if (std::optional<unsigned> axis = mesh.findAxis(name))
      return axis;
    std::vector<std::string> names(mesh.axisNames().begin(),
                                   mesh.axisNames().end());
    std::string suggestion = closestSpelling(name, names);
    error(context + "'flat' names an unknown mesh axis " + quoteText(name))
        .hint(!suggestion.empty() ? "did you mean '" + suggestion + "'?"
              : names.empty()
                  ? std::string("name the mesh's axes with dim_names")
                  : "mesh axes are named " + llvm::join(names, ", "));
    return std::nullopt;
  }
  std::optional<int64_t> axis = readInt(value, context + "flat", hint);
  if (!axis)
    return std::nullopt;
  if (*axis < 0 || *axis >= static_cast<int64_t>(mesh.ndim())) {
    error(context + "'flat' is axis " + std::to_string(*axis) +
          ", outside the mesh's " + std::to_string(mesh.ndim()) +
          (mesh.ndim() == 1 ? " axis" : " axes"))
        .hint("mesh axes are numbered from 0, from the left");
    return std::nullopt;
  }
  return static_cast<unsigned>(*axis);
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
          describeJsonValue(*value))
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
  error(context + "unknown mesh " + quoteText(name))
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
                     "{\"pp\": 1} (or \"last\", -1 for the last index): the "
                     "tensor lives on that slice of the mesh";
  if (!value.is_object()) {
    error(context + "'select' must be an object, not " +
          describeJsonValue(value))
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
                 quoteText(it.key()))
          .hint(!suggestion.empty() ? "did you mean '" + suggestion + "'?"
                : names.empty()
                    ? std::string("name the mesh's axes with dim_names")
                    : "mesh axes are named " + llvm::join(names, ", "));
      return false;
    }
    int64_t size = mesh->shape()[*axis];
    std::optional<int64_t> index;
    if (it.value().is_string()) {
      const std::string &word = it.value().get_ref<const std::string &>();
      if (word == "first" || word == "last") {
        index = word == "first" ? 0 : size - 1;
      } else {
        error(context + "select[" + quoteText(it.key()) + "] is " +
              quoteText(word) + "; the words are \"first\" and \"last\"")
            .hint(hint);
        return false;
      }
    } else {
      index = readInt(it.value(),
                      context + "select[" + quoteText(it.key()) + "]", hint);
      if (!index)
        return false;
      // Negative indices count from the end, as in Python: -1 is the last.
      if (*index < 0 && *index >= -size)
        *index += size;
    }
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
    error(name + " must be a mesh axis number or name, not " +
          describeJsonValue(item))
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

//===----------------------------------------------------------------------===//
// Placing one key
//===----------------------------------------------------------------------===//

std::optional<KeyPlacement> LayoutSpecParser::placeKey(
    const PlacementSpec &spec, const std::string &keyContext,
    llvm::ArrayRef<int64_t> globalShape,
    llvm::ArrayRef<std::pair<unsigned, int64_t>> idSelects) {
  At at(*this, spec.path);
  KeyPlacement out;
  out.sharedMesh = &spec.mesh();
  if (!idSelects.empty()) {
    // A rule's keys share a few stages and expert groups: narrow once each.
    auto cacheKey = std::make_tuple(&spec, idSelects[0].second,
                                    idSelects.size() > 1 ? idSelects[1].second
                                                         : int64_t(-1));
    auto found = idMeshes_.find(cacheKey);
    if (found == idMeshes_.end()) {
      std::optional<DeviceMesh> narrowed;
      const DeviceMesh *mesh = &spec.mesh();
      for (auto [axis, index] : idSelects) {
        LayoutError problem;
        narrowed = mesh->select(axis, index, &problem);
        if (!narrowed) {
          error(keyContext + problem.message).hint(problem.hint);
          return std::nullopt;
        }
        mesh = &*narrowed;
      }
      found = idMeshes_.emplace(cacheKey, std::move(*narrowed)).first;
    }
    out.sharedMesh = &found->second;
  }
  const DeviceMesh &mesh = out.mesh();
  if (spec.mappingField.empty()) {
    out.placement = TensorPlacement::replicated(globalShape.size());
  } else {
    AxisNumbering numbering = spec.mappingField == "dims_mapping"
                                  ? AxisNumbering::FromLeft
                                  : AxisNumbering::FromRight;
    LayoutError problem;
    out.placement = TensorPlacement::resolve(mesh, globalShape, spec.entries,
                                             numbering, &problem);
    if (!out.placement) {
      Enter enter(*this, JsonPathStep::member(spec.mappingField));
      std::vector<JsonPathStep> steps;
      if (problem.entry) {
        steps.push_back(JsonPathStep::element(*problem.entry));
        if (problem.item && (*spec.mappingValue)[*problem.entry].is_array())
          steps.push_back(JsonPathStep::element(*problem.item));
      }
      errorBelow(steps, keyContext + problem.message).hint(problem.hint);
      return std::nullopt;
    }
  }
  if (spec.flatAxis) {
    for (size_t dim = 0; dim < out.placement->ndim(); ++dim) {
      llvm::ArrayRef<unsigned> axes = out.placement->axes(dim);
      if (std::find(axes.begin(), axes.end(), *spec.flatAxis) == axes.end())
        continue;
      Enter enter(*this, JsonPathStep::member("flat"));
      error(keyContext + "mesh " + mesh.describeAxis(*spec.flatAxis) +
            " both splits tensor dimension " + std::to_string(dim) +
            " and spreads the flattened elements")
          .hint("flatten over an axis the placement does not use");
      return std::nullopt;
    }
    out.flatAxis = spec.flatAxis;
  }
  return out;
}

} // namespace layoutspec

} // namespace aoa
