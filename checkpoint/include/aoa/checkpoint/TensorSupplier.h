//===- TensorSupplier.h - Data for a checkpoint being written ---*- C++ -*-===//
//
// Writing a checkpoint in a layout (ShardedCheckpointWriter.h) needs, for
// every shard, a region of its key's data. A supplier provides regions of
// keys, whatever its own storage:
//  - another checkpoint (CheckpointReader): re-sharding without any AOA
//    statement, the keys, dtypes and shapes staying the same;
//  - one safetensors file of whole tensors, named by their keys;
//  - a synthetic fill (SyntheticFill.h).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_CHECKPOINT_TENSORSUPPLIER_H
#define AOA_CHECKPOINT_TENSORSUPPLIER_H

#include "aoa/checkpoint/SyntheticFill.h"
#include "aoa/ir/Box.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/Error.h"

#include <cstddef>
#include <memory>
#include <string>

namespace aoa::checkpoint {

using runtime::Error;
using runtime::Expected;
using runtime::Status;

class CheckpointReader;

class TensorSupplier {
public:
  virtual ~TensorSupplier();

  /// What the data comes from, for messages: "checkpoint DIR", "FILE",
  /// "fill random:7".
  virtual std::string description() const = 0;
  /// Checks that the supplier has `key` (of the layout) with the same dtype
  /// and global shape; the error names the key and both sides otherwise.
  virtual Status check(TensorRef key) const = 0;
  /// Writes `region` (a box in the key's coordinates) of `key` into
  /// `buffer`: dense, row-major, the key's dtype, region volume × dtype size
  /// bytes. Precondition: check(key) succeeded.
  virtual Status read(TensorRef key, const Box &region, void *buffer,
                      size_t bufferSize) const = 0;
};

/// Supplies the keys of a checkpoint; `reader` must outlive the supplier.
std::unique_ptr<TensorSupplier>
makeCheckpointSupplier(const CheckpointReader &reader);

/// Opens a safetensors file whose tensors are whole keys, named by their
/// keys.
Expected<std::unique_ptr<TensorSupplier>>
openSafetensorsSupplier(const std::string &path);

/// Supplies every key of any dtype and shape from `fill`.
std::unique_ptr<TensorSupplier> makeSyntheticSupplier(SyntheticFill fill);

} // namespace aoa::checkpoint

#endif // AOA_CHECKPOINT_TENSORSUPPLIER_H
