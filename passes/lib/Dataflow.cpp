//===- Dataflow.cpp --------------------------------------------------------===//
#include "aoa/passes/Dataflow.h"

#include "aoa/passes/KeySpace.h"

namespace aoa {

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
  input.view = makeView(
      input.type, {Piece{whole, id, whole, Transform::identity(whole.rank())}});
  inputs.push_back(std::move(input));
  inputUses.push_back(0);
  inputKeys.intern(key);
  return id;
}

} // namespace aoa
