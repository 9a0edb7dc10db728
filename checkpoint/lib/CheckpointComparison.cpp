//===- CheckpointComparison.cpp -------------------------------------------===//
#include "aoa/checkpoint/CheckpointComparison.h"

#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/ir/ContentHashText.h"
#include "aoa/ir/RowMajorChunks.h"
#include "aoa/runtime/transforms/ElementValue.h"
#include "aoa/runtime/transforms/RegionCopy.h"

#include "aoa/runtime/support/Messages.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ostream>

namespace aoa::checkpoint {

using namespace runtime;

namespace {

/// Adds the differences of `count` dense elements at `a` and `b`, element i
/// being at row-major position i of `frame` (global coordinates), to `into`.
void compareDense(DType dtype, std::optional<double> tolerance,
                  const std::byte *a, const std::byte *b, const Box &frame,
                  ElementDifferences &into) {
  size_t elementSize = dtypeSize(dtype);
  int64_t count = frame.volume();
  if (std::memcmp(a, b, size_t(count) * elementSize) == 0)
    return;
  bool tolerant = tolerance && isFloatingDType(dtype);
  for (int64_t i = 0; i < count; ++i) {
    const std::byte *x = a + i * elementSize, *y = b + i * elementSize;
    if (std::memcmp(x, y, elementSize) == 0)
      continue;
    double difference =
        std::fabs(elementAsDouble(dtype, x) - elementAsDouble(dtype, y));
    if (tolerant && difference <= *tolerance)
      continue;
    if (into.count++ == 0) {
      into.firstIndex =
          rowMajorCoords(frame, i).value_or(std::vector<int64_t>{});
      into.firstValue = formatElement(dtype, x);
      into.secondValue = formatElement(dtype, y);
      into.maxAbsDifference = difference;
    } else if (std::isnan(difference) || difference > into.maxAbsDifference) {
      if (!std::isnan(into.maxAbsDifference))
        into.maxAbsDifference = difference;
    }
  }
}

/// True when `shard` stores the element at `point`.
bool storesPoint(ShardRef shard, llvm::ArrayRef<int64_t> point) {
  Box box(shard.globalOffset(), shard.localShape());
  std::optional<int64_t> index = rowMajorIndex(box, point);
  if (!index)
    return false;
  std::optional<FlatElementRange> flat = shard.flatRange();
  return !flat || (flat->begin <= *index && *index < flat->end);
}

std::string describeShard(TensorRef tensor, ShardRef shard) {
  return "shard " + std::to_string(shard.id() - tensor.firstShard()) + " (" +
         std::string(shard.file()) + ", " + quoteName(shard.name()) + ")";
}

/// Compares the data of one key that both checkpoints have alike.
class KeyDataComparison {
public:
  KeyDataComparison(const CheckpointReader &first, TensorRef firstTensor,
                    const CheckpointReader &second, TensorRef secondTensor,
                    const ComparisonOptions &options, KeyComparison &result)
      : readers_{&first, &second}, tensors_{firstTensor, secondTensor},
        options_(options), result_(result), dtype_(firstTensor.dtype()),
        elementSize_(dtypeSize(dtype_)) {}

  /// Returns the elements compared.
  Expected<int64_t> run();

private:
  /// Checks a replica's values against what `side` read before.
  Status checkReplica(int side, const Box &chunk, const ReplicaOverlap &seen);

  const CheckpointReader *readers_[2];
  TensorRef tensors_[2];
  const ComparisonOptions &options_;
  KeyComparison &result_;
  DType dtype_;
  size_t elementSize_;
  std::vector<std::byte> buffers_[2];
  std::vector<std::byte> earlier_;
};

Expected<int64_t> KeyDataComparison::run() {
  ElementDifferences data;
  int64_t compared = 0;
  int64_t chunkElements =
      std::max<int64_t>(1, int64_t(options_.chunkBytes / elementSize_));
  Status failure;
  forEachRowMajorChunk(
      Box::fromShape(tensors_[0].globalShape()), chunkElements,
      [&](const Box &chunk) {
        size_t size = size_t(chunk.volume()) * elementSize_;
        for (int side = 0; side < 2 && failure; ++side) {
          buffers_[side].resize(size);
          auto check = [&](const ReplicaOverlap &seen) {
            return checkReplica(side, chunk, seen);
          };
          llvm::function_ref<Status(const ReplicaOverlap &)> onReplica;
          if (options_.checkReplicas)
            onReplica = check;
          failure = readers_[side]->readRegion(tensors_[side].id(), chunk,
                                               buffers_[side].data(), size,
                                               onReplica);
        }
        if (!failure)
          return false;
        compareDense(dtype_, options_.absoluteTolerance, buffers_[0].data(),
                     buffers_[1].data(), chunk, data);
        compared += chunk.volume();
        return true;
      });
  if (!failure)
    return failure.error();
  if (data.count != 0)
    result_.data = std::move(data);
  return compared;
}

Status KeyDataComparison::checkReplica(int side, const Box &chunk,
                                       const ReplicaOverlap &seen) {
  // What the earlier shards put there, densely.
  earlier_.resize(size_t(seen.region.volume()) * elementSize_);
  std::vector<std::byte> &buffer = buffers_[side];
  if (Status copy = copyRegion(
          TensorView(buffer.data(), buffer.size(), dtype_, chunk.shape()),
          seen.region.relativeTo(chunk),
          MutableTensorView(earlier_.data(), earlier_.size(), dtype_,
                            seen.region.shape()),
          Box::fromShape(seen.region.shape()));
      !copy)
    return copy;
  ElementDifferences found;
  compareDense(dtype_, options_.absoluteTolerance, earlier_.data(),
               static_cast<const std::byte *>(seen.values), seen.region, found);
  if (found.count == 0)
    return Status();

  auto known =
      std::find_if(result_.replicas.begin(), result_.replicas.end(),
                   [&](const ReplicaDisagreement &r) {
                     return r.checkpoint == side && r.shard == seen.shard;
                   });
  if (known != result_.replicas.end()) {
    ElementDifferences &total = known->differences;
    total.count += found.count;
    if (std::isnan(found.maxAbsDifference) ||
        (!std::isnan(total.maxAbsDifference) &&
         found.maxAbsDifference > total.maxAbsDifference))
      total.maxAbsDifference = found.maxAbsDifference;
    return Status();
  }
  TensorRef tensor = tensors_[side];
  ReplicaDisagreement disagreement;
  disagreement.checkpoint = side;
  disagreement.shard = seen.shard;
  disagreement.shardText =
      describeShard(tensor, readers_[side]->metadata().shard(seen.shard));
  for (ShardRef shard : tensor.shards())
    if (shard.id() != seen.shard && storesPoint(shard, found.firstIndex)) {
      disagreement.earlierShard = shard.id();
      disagreement.earlierShardText = describeShard(tensor, shard);
      break;
    }
  disagreement.differences = std::move(found);
  result_.replicas.push_back(std::move(disagreement));
  return Status();
}

/// Hashes the shards of `tensor` that record one.
Status verifyHashes(const CheckpointReader &reader, int side, TensorRef tensor,
                    KeyComparison &result) {
  for (ShardRef shard : tensor.shards()) {
    std::optional<uint64_t> recorded = shard.contentHash();
    if (!recorded)
      continue;
    Expected<uint64_t> actual = reader.hashShard(shard.id());
    if (!actual)
      return actual.error();
    if (*actual != *recorded)
      result.hashes.push_back(HashMismatch{
          side, shard.id(),
          describeShard(tensor, shard) + ": the data's xxh3 is " +
              formatContentHash(*actual) + ", but the metadata records " +
              formatContentHash(*recorded)});
  }
  return Status();
}

std::string formatNumber(double value) {
  char digits[64];
  std::to_chars_result result =
      std::to_chars(digits, digits + sizeof(digits), value);
  return std::string(digits, result.ptr);
}

} // namespace

/// Compares a key that `first` has as `ta` and `second` as `tb` (either may
/// be missing) and records it in `comparison` when it differs.
static Status compareKey(const CheckpointReader &first,
                         const CheckpointReader &second, const TensorRef *ta,
                         const TensorRef *tb, const ComparisonOptions &options,
                         CheckpointComparison &comparison) {
  ++comparison.keyCount;
  KeyComparison key;
  key.key = std::string(ta ? ta->key() : tb->key());
  key.inFirst = ta != nullptr;
  key.inSecond = tb != nullptr;
  if (ta) {
    key.firstDType = ta->dtype();
    key.firstShape = ta->globalShape().vec();
  }
  if (tb) {
    key.secondDType = tb->dtype();
    key.secondShape = tb->globalShape().vec();
  }
  if (ta && tb) {
    ++comparison.commonKeyCount;
    if (!key.dtypeDiffers() && !key.shapeDiffers()) {
      key.elementCount = Box::fromShape(key.firstShape).volume();
      Expected<int64_t> compared =
          KeyDataComparison(first, *ta, second, *tb, options, key).run();
      if (!compared)
        return compared.error();
      comparison.elementsCompared += *compared;
    }
  }
  if (options.verifyHashes) {
    if (ta)
      if (Status verified = verifyHashes(first, 0, *ta, key); !verified)
        return verified;
    if (tb)
      if (Status verified = verifyHashes(second, 1, *tb, key); !verified)
        return verified;
  }
  if (key.differs())
    comparison.differences.push_back(std::move(key));
  return Status();
}

Expected<CheckpointComparison>
compareCheckpoints(const CheckpointReader &first,
                   const CheckpointReader &second,
                   const ComparisonOptions &options) {
  CheckpointComparison comparison;
  const ShardMetadata &a = first.metadata(), &b = second.metadata();
  llvm::ArrayRef<TensorId> orderA = a.tensorIdsByKey(),
                           orderB = b.tensorIdsByKey();
  // A merge of the two key-sorted lists.
  size_t i = 0, j = 0;
  while (i < orderA.size() || j < orderB.size()) {
    int order =
        i == orderA.size() ? 1
        : j == orderB.size()
            ? -1
            : a.tensor(orderA[i]).key().compare(b.tensor(orderB[j]).key());
    TensorRef ta = a.tensor(order <= 0 ? orderA[i] : 0);
    TensorRef tb = b.tensor(order >= 0 ? orderB[j] : 0);
    if (Status compared =
            compareKey(first, second, order <= 0 ? &ta : nullptr,
                       order >= 0 ? &tb : nullptr, options, comparison);
        !compared)
      return compared.error();
    i += order <= 0;
    j += order >= 0;
  }
  return comparison;
}

void printCheckpointComparison(const CheckpointComparison &comparison,
                               std::ostream &os,
                               const ComparisonPrintOptions &options) {
  const std::string &nameA = options.firstName, &nameB = options.secondName;
  auto side = [&](int checkpoint) { return checkpoint == 0 ? nameA : nameB; };
  size_t onlyInA = 0, onlyInB = 0;
  for (const KeyComparison &key : comparison.differences) {
    onlyInA += !key.inSecond;
    onlyInB += !key.inFirst;
  }
  size_t reported = 0;
  for (const KeyComparison &key : comparison.differences) {
    if (reported++ == options.maxKeysReported)
      break;
    std::string head = "key " + quoteName(key.key) + ": ";
    if (!key.inFirst || !key.inSecond)
      os << head << "only in " << (key.inFirst ? nameA : nameB) << "\n";
    if (key.dtypeDiffers())
      os << head << "dtype " << dtypeName(key.firstDType) << " in " << nameA
         << ", " << dtypeName(key.secondDType) << " in " << nameB << "\n";
    if (key.shapeDiffers())
      os << head << "shape " << formatExtents(key.firstShape) << " in " << nameA
         << ", " << formatExtents(key.secondShape) << " in " << nameB << "\n";
    if (key.data)
      os << head << key.data->count << " of " << key.elementCount
         << " elements differ; first at " << formatExtents(key.data->firstIndex)
         << ": " << nameA << " = " << key.data->firstValue << ", " << nameB
         << " = " << key.data->secondValue << "; max |" << nameA << " - "
         << nameB << "| = " << formatNumber(key.data->maxAbsDifference) << "\n";
    for (const ReplicaDisagreement &replica : key.replicas)
      os << head << "in " << side(replica.checkpoint) << ", "
         << replica.shardText << " disagrees with its replica "
         << replica.earlierShardText << " in " << replica.differences.count
         << (replica.differences.count == 1 ? " element" : " elements")
         << "; first at " << formatExtents(replica.differences.firstIndex)
         << ": " << replica.differences.secondValue << " vs "
         << replica.differences.firstValue << "; max difference "
         << formatNumber(replica.differences.maxAbsDifference) << "\n";
    for (const HashMismatch &hash : key.hashes)
      os << head << "in " << side(hash.checkpoint) << ", " << hash.message
         << "\n";
  }
  if (comparison.differences.size() > options.maxKeysReported)
    os << "... and " << comparison.differences.size() - options.maxKeysReported
       << " more differing keys\n";

  if (comparison.identical()) {
    os << "identical: " << comparison.keyCount
       << (comparison.keyCount == 1 ? " key, " : " keys, ")
       << comparison.elementsCompared << " elements\n";
    return;
  }
  os << "different: " << comparison.differences.size() << " of "
     << comparison.keyCount << " keys differ";
  std::string parts;
  if (onlyInA)
    parts += std::to_string(onlyInA) + " only in " + nameA;
  if (onlyInB)
    parts += (parts.empty() ? "" : ", ") + std::to_string(onlyInB) +
             " only in " + nameB;
  if (!parts.empty())
    os << " (" << parts << ")";
  os << "; " << comparison.elementsCompared << " elements compared\n";
}

} // namespace aoa::checkpoint
