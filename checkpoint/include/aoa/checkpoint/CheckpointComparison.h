//===- CheckpointComparison.h - Two checkpoints, key by key -----*- C++ -*-===//
//
// Compares two checkpoints whatever their layouts: the keys each has, their
// dtypes and global shapes, and, for the keys both have alike, every
// element. Data is compared a bounded row-major slab of a key at a time
// (RowMajorChunks.h), each slab assembled from whichever shards hold it, so
// memory stays near 2 × chunkBytes however large the keys are.
//
// Elements are equal when their bits are: a NaN equals a NaN with the same
// bits, and -0 differs from +0. With an absolute tolerance, floating elements
// whose bits differ are still equal when |a - b| <= tolerance (so -0 and +0
// are then equal, and a NaN never equals anything but its own bits).
//
// Inside each checkpoint, shards that store the same elements (replicas)
// must agree; the first shard in metadata order that stores an element is
// the one compared with the other checkpoint, and every later shard storing
// it is checked against that one.
//
// Unreadable data (a missing or corrupt file, elements no shard stores) is
// an error, not a difference.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_CHECKPOINT_CHECKPOINTCOMPARISON_H
#define AOA_CHECKPOINT_CHECKPOINTCOMPARISON_H

#include "aoa/ir/DType.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace aoa::checkpoint {

using runtime::Error;
using runtime::Expected;
using runtime::Status;

class CheckpointReader;

struct ComparisonOptions {
  /// Floating elements within this distance are equal (see the file
  /// comment); nullopt compares bits only.
  std::optional<double> absoluteTolerance;
  /// Check that the replicas inside each checkpoint agree.
  bool checkReplicas = true;
  /// Also hash every shard that records an xxh3 and report mismatches.
  bool verifyHashes = false;
  /// Bytes of one key compared at a time, per checkpoint.
  size_t chunkBytes = size_t(32) << 20;
};

/// The elements that differ between two versions of some values.
struct ElementDifferences {
  int64_t count = 0;
  /// The first one in row-major order, in the key's coordinates.
  std::vector<int64_t> firstIndex;
  /// Its two values, in decimal (ElementValue.h).
  std::string firstValue, secondValue;
  /// The largest |first - second| over the differing elements (as doubles);
  /// NaN when one of a differing pair is a NaN.
  double maxAbsDifference = 0;
};

/// A shard whose values differ from those of an earlier shard of its key
/// that stores the same elements.
struct ReplicaDisagreement {
  /// 0: the first checkpoint; 1: the second.
  int checkpoint = 0;
  /// The shard whose values differ, and the one that stores the first
  /// differing element before it (the one compared across checkpoints).
  ShardId shard = 0, earlierShard = 0;
  /// "shard 2 (model_rank01.safetensors, 'w')".
  std::string shardText, earlierShardText;
  /// first = the earlier shard's values, second = this shard's.
  ElementDifferences differences;
};

/// A key whose bytes differ from the xxh3 its metadata records.
struct HashMismatch {
  int checkpoint = 0;
  ShardId shard = 0;
  std::string message;
};

/// How one key differs; KeyComparison::differs() is false for a key that is
/// the same in both.
struct KeyComparison {
  std::string key;
  bool inFirst = true, inSecond = true;
  DType firstDType = DType::F32, secondDType = DType::F32;
  std::vector<int64_t> firstShape, secondShape;
  /// Elements of the key when both have it alike (else 0).
  int64_t elementCount = 0;
  /// When both have the key alike and some elements differ.
  std::optional<ElementDifferences> data;
  std::vector<ReplicaDisagreement> replicas;
  std::vector<HashMismatch> hashes;

  bool dtypeDiffers() const {
    return inFirst && inSecond && firstDType != secondDType;
  }
  bool shapeDiffers() const {
    return inFirst && inSecond && firstShape != secondShape;
  }
  bool differs() const {
    return !inFirst || !inSecond || dtypeDiffers() || shapeDiffers() || data ||
           !replicas.empty() || !hashes.empty();
  }
};

struct CheckpointComparison {
  /// The keys that differ, in key order (bytewise).
  std::vector<KeyComparison> differences;
  /// Keys in either checkpoint, and in both.
  size_t keyCount = 0, commonKeyCount = 0;
  /// Elements compared across the two checkpoints.
  int64_t elementsCompared = 0;

  bool identical() const { return differences.empty(); }
};

/// Compares `first` with `second` (see the file comment). Fails only when
/// data cannot be read.
Expected<CheckpointComparison>
compareCheckpoints(const CheckpointReader &first,
                   const CheckpointReader &second,
                   const ComparisonOptions &options = {});

struct ComparisonPrintOptions {
  /// How the two checkpoints are called in the report.
  std::string firstName = "A", secondName = "B";
  /// Keys reported in detail; the rest are counted.
  size_t maxKeysReported = 20;
};

/// One line per difference of each reported key, then a summary line:
///   key 'w': 3 of 4096 elements differ; first at [0, 7]: A = 0.5, B = -0.25;
///   max |A - B| = 0.75
///   key 'b': only in B
///   identical: 12 keys, 81920 elements
///   different: 2 of 13 keys differ (1 only in B); 81920 elements compared
void printCheckpointComparison(const CheckpointComparison &comparison,
                               std::ostream &os,
                               const ComparisonPrintOptions &options = {});

} // namespace aoa::checkpoint

#endif // AOA_CHECKPOINT_CHECKPOINTCOMPARISON_H
