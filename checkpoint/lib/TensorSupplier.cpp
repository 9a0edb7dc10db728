//===- TensorSupplier.cpp -------------------------------------------------===//
#include "aoa/checkpoint/TensorSupplier.h"

#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/storage/StoredRegion.h"

#include "aoa/runtime/support/Messages.h"

#include <cerrno>
#include <sys/stat.h>

namespace aoa::checkpoint {

using namespace runtime;

namespace {

const char *const kSameKeysHint =
    "re-sharding keeps every key's dtype and shape; to rename, cast, "
    "reshape or fuse keys, convert with AOA statements (aoa-compile and "
    "aoa-run)";

std::string describeTensor(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return std::string(dtypeName(dtype)) + " " + formatExtents(shape);
}

/// The error for a key the supplier holds differently from the layout.
Error mismatch(TensorRef key, const std::string &source, DType dtype,
               llvm::ArrayRef<int64_t> shape) {
  return Error{"key " + quoteName(key.key()) + ": the layout has " +
                   describeTensor(key.dtype(), key.globalShape()) + ", but " +
                   source + " has " + describeTensor(dtype, shape),
               kSameKeysHint};
}

class CheckpointSupplier final : public TensorSupplier {
public:
  explicit CheckpointSupplier(const CheckpointReader &reader)
      : reader_(reader) {}

  std::string description() const override {
    return "checkpoint " + reader_.directory();
  }

  Status check(TensorRef key) const override {
    std::optional<TensorRef> source = reader_.metadata().find(key.key());
    if (!source)
      return Error{"key " + quoteName(key.key()) + " of the layout is not in " +
                       description(),
                   kSameKeysHint};
    if (source->dtype() != key.dtype() ||
        source->globalShape() != key.globalShape())
      return mismatch(key, description(), source->dtype(),
                      source->globalShape());
    return Status();
  }

  Status read(TensorRef key, const Box &region, void *buffer,
              size_t bufferSize) const override {
    std::optional<TensorRef> source = reader_.metadata().find(key.key());
    if (!source)
      return check(key);
    return reader_.readRegion(source->id(), region, buffer, bufferSize);
  }

private:
  const CheckpointReader &reader_;
};

class SafetensorsSupplier final : public TensorSupplier {
public:
  explicit SafetensorsSupplier(SafetensorsReader file)
      : file_(std::move(file)) {}

  std::string description() const override { return file_.path(); }

  Status check(TensorRef key) const override {
    const SafetensorsTensor *tensor = file_.find(key.key());
    if (!tensor)
      return Error{"key " + quoteName(key.key()) + " of the layout is not in " +
                       file_.path(),
                   "the file must hold every key of the layout as a whole "
                   "tensor named by its key"};
    if (tensor->dtype != key.dtype() ||
        llvm::ArrayRef<int64_t>(tensor->shape) != key.globalShape())
      return mismatch(key, file_.path(), tensor->dtype, tensor->shape);
    return Status();
  }

  Status read(TensorRef key, const Box &region, void *buffer,
              size_t bufferSize) const override {
    if (Status checked = check(key); !checked)
      return checked;
    const SafetensorsTensor &tensor = *file_.find(key.key());
    size_t elementSize = dtypeSize(tensor.dtype);
    if (bufferSize != uint64_t(region.volume()) * elementSize)
      return Error{"key " + quoteName(key.key()) + ": a buffer of " +
                       std::to_string(bufferSize) + " bytes for region " +
                       region.toString(),
                   "size the buffer as the region's volume times the dtype "
                   "size"};
    Status failure;
    Status walk = forEachStoredRun(Box::fromShape(tensor.shape), std::nullopt,
                                   region, [&](const StoredRun &run) {
                                     failure = file_.readElements(
                                         tensor, uint64_t(run.storedOffset),
                                         uint64_t(run.count),
                                         static_cast<std::byte *>(buffer) +
                                             run.regionOffset * elementSize);
                                     return failure.ok();
                                   });
    if (!walk)
      return walk;
    return failure;
  }

private:
  SafetensorsReader file_;
};

class SyntheticSupplier final : public TensorSupplier {
public:
  explicit SyntheticSupplier(SyntheticFill fill) : fill_(fill) {}

  std::string description() const override {
    return "fill " + fill_.toString();
  }
  Status check(TensorRef) const override { return Status(); }
  Status read(TensorRef key, const Box &region, void *buffer,
              size_t bufferSize) const override {
    return fillSynthetic(fill_, key.key(), key.dtype(), key.globalShape(),
                         region, buffer, bufferSize);
  }

private:
  SyntheticFill fill_;
};

} // namespace

TensorSupplier::~TensorSupplier() = default;

std::unique_ptr<TensorSupplier>
makeCheckpointSupplier(const CheckpointReader &reader) {
  return std::make_unique<CheckpointSupplier>(reader);
}

Expected<std::unique_ptr<TensorSupplier>>
openSafetensorsSupplier(const std::string &path) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0 && errno == ENOENT)
    return Error{storageMessage(path, "the file does not exist"),
                 "pass a safetensors file of whole tensors named by their "
                 "keys, or a checkpoint directory"};
  Expected<SafetensorsReader> file = SafetensorsReader::open(path);
  if (!file)
    return file.error();
  return std::unique_ptr<TensorSupplier>(
      std::make_unique<SafetensorsSupplier>(std::move(*file)));
}

std::unique_ptr<TensorSupplier> makeSyntheticSupplier(SyntheticFill fill) {
  return std::make_unique<SyntheticSupplier>(fill);
}

} // namespace aoa::checkpoint
