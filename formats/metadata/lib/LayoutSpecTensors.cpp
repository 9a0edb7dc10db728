//===- LayoutSpecTensors.cpp - Tensors of layout specs --------------------===//
//
// The `tensors` entries of a layout spec (a key's dtype, shape and
// placement, or its key-list entry's), and adding a placed tensor's shards,
// with the optimizer states generated for every model key, to the metadata.
//
//===----------------------------------------------------------------------===//
#include "LayoutSpecParser.h"
#include "LayoutSpecStrings.h"
#include "aoa/ir/OptimizerState.h"

namespace aoa {

namespace layoutspec {

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

void LayoutSpecParser::parseTensors(const Json &value) {
  if (!value.is_object()) {
    error("'tensors' must be an object mapping keys to tensors, not " +
          describeJsonValue(value))
        .hint(kSpecHint);
    return;
  }
  for (auto it = value.begin(); it != value.end(); ++it)
    listedKeys_.insert(it.key());
  builder_.reserve(value.size() * (1 + optimizerSuffixes_.size()), 0, 0);
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (stopForErrors())
      return;
    Enter enter(*this, JsonPathStep::member(it.key()));
    parseTensor(it.key(), it.value());
  }
}

void LayoutSpecParser::parseTensor(const std::string &key, const Json &value) {
  std::string context = "tensor " + quoteText(key) + ": ";
  if (key.empty()) {
    errorAtKey("a tensor key cannot be empty").hint("name the tensor");
    return;
  }
  if (!value.is_object()) {
    error(context + "a tensor must be an object, not " +
          describeJsonValue(value))
        .hint("a tensor has \"dtype\", \"global_shape\" and \"dims_mapping\" "
              "or \"tensor_map\"");
    return;
  }
  unsigned errors = errorCount();
  ListedTensor listed;
  listed.key = key;
  listed.path = where_;
  PlacementFields fields;
  bool typeOk = readTensorType(key, value, context, fields, listed);
  bool placementOk = checkPlacementFields(fields, context);
  if (!typeOk || !placementOk || errorCount() != errors)
    return;
  PlacementSpec spec;
  if (!readPlacementSpec(fields, context, spec))
    return;
  std::optional<KeyPlacement> placement =
      placeKey(spec, context, listed.globalShape, {});
  if (!placement)
    return;
  listed.placement = std::move(*placement);
  // A placement on the spec's own sub-mesh must outlive `spec`.
  if (spec.ownMesh && listed.placement.sharedMesh == &*spec.ownMesh) {
    listed.placement.ownMesh = std::move(spec.ownMesh);
    listed.placement.sharedMesh = nullptr;
  }
  listedIndex_.emplace(key, listed_.size());
  listed_.push_back(std::move(listed));
}

bool LayoutSpecParser::readTensorType(const std::string &key, const Json &value,
                                      const std::string &context,
                                      PlacementFields &fields,
                                      ListedTensor &out) {
  unsigned errors = errorCount();
  std::optional<DType> dtype;
  std::optional<std::vector<int64_t>> globalShape;
  forEachField(value, tensorFields(), context, "a tensor",
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
                     error(context + "unknown dtype " + quoteText(*text))
                         .hint("dtypes: " + std::string(allDTypeNames()));
                 } else if (name == "global_shape") {
                   globalShape =
                       readIntList(fieldValue, context + "global_shape",
                                   "the tensor's extents, e.g. [1024, 512]");
                 } else {
                   takePlacementField(name, fieldValue, context, fields);
                 }
               });
  // A key of the key list has its dtype and shape there; given here too,
  // they must agree.
  const LayoutKey *known = nullptr;
  auto found = keyIndex_.find(key);
  if (found != keyIndex_.end())
    known = &keys_->keys[found->second];
  if (!known)
    for (const char *required : {"dtype", "global_shape"})
      if (!value.contains(required))
        errorAtKey(context + "missing the field '" + required + "'")
            .hint("a tensor has \"dtype\", \"global_shape\" and "
                  "\"dims_mapping\" or \"tensor_map\"");
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
    else if (errorCount() == shapeErrors && known &&
             *globalShape != known->globalShape)
      error(context + "global_shape " + formatShape(*globalShape) +
            " differs from " + formatShape(known->globalShape) + " in " +
            keys_->origin)
          .hint("leave out dtype and global_shape to take them from " +
                keys_->origin);
  }
  if (dtype && known && *dtype != known->dtype) {
    Enter enter(*this, JsonPathStep::member("dtype"));
    error(context + "dtype " + std::string(dtypeName(*dtype)) +
          " differs from " + std::string(dtypeName(known->dtype)) + " in " +
          keys_->origin)
        .hint("leave out dtype and global_shape to take them from " +
              keys_->origin);
  }
  if (errorCount() != errors)
    return false;
  out.dtype = dtype ? *dtype : known->dtype;
  out.globalShape = globalShape ? std::move(*globalShape) : known->globalShape;
  return true;
}

//===----------------------------------------------------------------------===//
// Shards
//===----------------------------------------------------------------------===//

uint32_t LayoutSpecParser::fileId(uint32_t rank) {
  auto [it, inserted] = fileOfRank_.emplace(rank, 0);
  if (inserted)
    it->second = builder_.internFile(filePattern_.format(rank));
  return it->second;
}

void LayoutSpecParser::addPlacedTensor(const std::string &key, DType dtype,
                                       llvm::ArrayRef<int64_t> globalShape,
                                       const KeyPlacement &placement) {
  addTensor(key, dtype, globalShape, placement.mesh(), *placement.placement,
            placement.flatAxis);
  if (splitOptimizerSuffix(key).second.empty())
    addOptimizerStates(key, dtype, globalShape, placement);
}

void LayoutSpecParser::addTensor(const std::string &key, DType dtype,
                                 llvm::ArrayRef<int64_t> globalShape,
                                 const DeviceMesh &mesh,
                                 const TensorPlacement &placement,
                                 std::optional<unsigned> flatAxis) {
  std::optional<TensorId> tensor = builder_.addTensor(key, dtype, globalShape);
  if (!tensor) {
    error("tensor " + quoteText(key) + " is given twice")
        .hint("give each key once");
    return;
  }
  uint32_t name = builder_.keyNameId(*tensor);
  blocks_ = flatAxis
                ? expandFlatPlacement(mesh, placement, globalShape, *flatAxis)
                : expandPlacement(mesh, placement, globalShape);
  // Shards in rank order: the order readers of the metadata expect.
  std::stable_sort(
      blocks_.begin(), blocks_.end(),
      [](const RankBlock &a, const RankBlock &b) { return a.rank < b.rank; });
  for (const RankBlock &block : blocks_)
    builder_.addShard(block.rank, fileId(block.rank), name, block.box.offsets(),
                      block.box.shape(), block.flat);
}

void LayoutSpecParser::addOptimizerStates(const std::string &key, DType dtype,
                                          llvm::ArrayRef<int64_t> globalShape,
                                          const KeyPlacement &placement) {
  for (std::string_view suffix : optimizerSuffixes_) {
    // Paddle keeps an fp32 master weight only for 16-bit parameters.
    if (suffix == ".w_0" && dtype != DType::F16 && dtype != DType::BF16)
      continue;
    std::string stateKey = key + std::string(suffix);
    // A state the key list has is placed where the list has it.
    if (keyIndex_.count(stateKey))
      continue;
    if (listedKeys_.count(stateKey)) {
      At at(*this,
            {JsonPathStep::member("tensors"), JsonPathStep::member(stateKey)});
      errorAtKey("tensor " + quoteText(stateKey) +
                 " is listed, but 'optimizer_states' also makes it from " +
                 quoteText(key))
          .hint("remove it from 'tensors', or '" +
                std::string(suffix.substr(1)) + "' from 'optimizer_states'");
      continue;
    }
    // The beta-pow accumulators are one number, kept by every process.
    if (isBetaPowSuffix(suffix))
      addTensor(stateKey, DType::F32, {1}, placement.mesh(),
                TensorPlacement::replicated(1), std::nullopt);
    else
      addTensor(stateKey, DType::F32, globalShape, placement.mesh(),
                *placement.placement, placement.flatAxis);
  }
}

} // namespace layoutspec

} // namespace aoa
