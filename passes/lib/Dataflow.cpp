//===- Dataflow.cpp --------------------------------------------------------===//
#include "aoa/passes/Dataflow.h"

#include "aoa/passes/KeySpace.h"

namespace aoa {

std::optional<TensorRef>
InputTensor::storedAs(const ShardMetadata &source,
                      std::string_view suffix) const {
  std::optional<size_t> form = KeySpace::storedFormIndex(suffix);
  if (!form)
    return source.find(key + std::string(suffix));
  if (stored[*form] == KeySpace::kNoTensor)
    return std::nullopt;
  return source.tensor(stored[*form]);
}

std::optional<uint32_t> Dataflow::inputFor(const KeySpace &source,
                                           const std::string &key) {
  if (std::optional<uint32_t> id = inputKeys.find(key))
    return id;
  KeySpace::StoredForms stored = source.storedForms(key);
  std::optional<TensorRef> tensor = source.representative(stored);
  if (!tensor)
    return std::nullopt;
  uint32_t id = static_cast<uint32_t>(inputs.size());
  InputTensor input;
  input.key = key;
  input.stored = stored;
  input.type.shape.assign(tensor->globalShape().begin(),
                          tensor->globalShape().end());
  input.type.dtype = tensor->dtype();
  Box whole = Box::fromShape(input.type.shape);
  // (Inputs of one rank share their identity transform: a model has tens of
  // thousands of inputs and a handful of ranks.)
  if (identityTransforms.size() <= whole.rank())
    identityTransforms.resize(whole.rank() + 1);
  std::shared_ptr<const Transform> &identity = identityTransforms[whole.rank()];
  if (!identity)
    identity = Transform::identity(whole.rank());
  input.view = makeView(input.type, {Piece{whole, id, whole, identity}});
  inputs.push_back(std::move(input));
  inputUses.push_back(0);
  inputKeys.intern(key);
  return id;
}

} // namespace aoa
