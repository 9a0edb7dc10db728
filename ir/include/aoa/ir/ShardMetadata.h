//===- ShardMetadata.h - Where every tensor's shards are stored -*- C++ -*-===//
//
// The in-memory form of shard metadata (docs/shard-metadata.md): for every tensor key
// its dtype and global shape, and for every shard the process rank, the file,
// the tensor's name inside that file, the box (global_offset, local_shape) and
// an optional flat range. Source checkpoints and destination layouts both use
// it.
//
// It is built for DeepSeek-sized inputs (about a million shards), so:
//  - key strings, file names and in-file names are interned once each
//    (StringPool, dense uint32 ids); keys and in-file names share one pool,
//    since a shard's in-file name is usually its key;
//  - a tensor's shards are contiguous, and their coordinates live in one flat
//    int64 array (offset then shape, ndim values each), not in a vector per
//    shard;
//  - flat ranges are stored only for tensors that have one.
// TensorRef and ShardRef are cheap handles (a pointer and an id) that read
// those arrays. The model is immutable once built: ShardMetadataBuilder makes
// it (the metadata loader, tests and passes use the builder alike).
//
// A shard may carry the xxh3-64 hash (seed 0) of its stored bytes, which a
// written checkpoint records so that a later run can verify the data. Only
// written checkpoints have hashes, so the array is allocated on first use.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_SHARDMETADATA_H
#define AOA_IR_SHARDMETADATA_H

#include "aoa/ir/DType.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace aoa {

/// Ranks are below this (2^24 processes, the largest mesh aoa-layout
/// expands): per-rank tables stay bounded however a rank is spelled, and a
/// typo such as 4294967295 is an error rather than a 4-billion-entry table.
inline constexpr int64_t kRankLimit = int64_t(1) << 24;

/// A key has at most this many dimensions, as in a safetensors header: the
/// metadata loaders, the layout specs and the plan verifier refuse more (a
/// binary plan stores a region's rank in one byte).
inline constexpr size_t kDimensionLimit = 255;

using TensorId = uint32_t;
using ShardId = uint32_t;

/// Interned strings with dense ids 0, 1, 2, … in insertion order. The bytes of
/// all strings are kept back to back; an open-addressing table of (hash, id)
/// finds a string without storing it twice.
class StringPool {
public:
  /// The id of `text`, adding it when it is new; `inserted` says which.
  uint32_t intern(std::string_view text, bool *inserted = nullptr);
  std::optional<uint32_t> find(std::string_view text) const;
  /// A hint that `text` is interned or looked up soon: starts loading the
  /// memory where its slot is, so that the lookup does not wait for it.
  void prefetch(std::string_view text) const;
  std::string_view get(uint32_t id) const {
    return std::string_view(bytes_.data() + begins_[id],
                            begins_[id + 1] - begins_[id]);
  }
  uint32_t size() const {
    return begins_.empty() ? 0 : static_cast<uint32_t>(begins_.size() - 1);
  }
  void reserve(size_t strings, size_t bytes);
  size_t memoryBytes() const;

private:
  /// The slot holding `text`, or the empty slot where it would go.
  size_t findSlot(std::string_view text, uint32_t hash) const;
  void rehash(size_t slotCount);

  std::string bytes_;
  std::vector<uint64_t> begins_{0}; ///< size() + 1 entries
  /// hash << 32 | (id + 1), or 0 for an empty slot: the hash is compared
  /// before the bytes are touched, and rehashing needs no strings.
  std::vector<uint64_t> slots_;
};

/// `flat_range: [begin, end)`: the stored 1-D data is these elements of the
/// row-major flattening of the shard's box.
struct FlatElementRange {
  int64_t begin = 0;
  int64_t end = 0;

  int64_t size() const { return end - begin; }
  friend bool operator==(const FlatElementRange &a,
                         const FlatElementRange &b) {
    return a.begin == b.begin && a.end == b.end;
  }
  friend bool operator!=(const FlatElementRange &a,
                         const FlatElementRange &b) {
    return !(a == b);
  }
};

/// Product of the extents (1 for rank 0); nullopt when it overflows int64 or
/// an extent is negative.
std::optional<int64_t> elementCount(llvm::ArrayRef<int64_t> shape);

/// `[0:256, 512:1024]`: the element range of the box (offset, shape), for
/// diagnostics; `[]` for rank 0. Precondition: equal sizes (extra entries of
/// the longer list are ignored).
std::string formatElementRange(llvm::ArrayRef<int64_t> offset,
                               llvm::ArrayRef<int64_t> shape);
/// `[1024, 512]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

class ShardMetadata;

/// One shard: a handle into a ShardMetadata, valid while it lives.
class ShardRef {
public:
  ShardId id() const { return id_; }
  TensorId tensorId() const;
  /// The process rank that stores (or, in a destination layout, writes) it.
  uint32_t rank() const;
  uint32_t fileId() const;
  std::string_view file() const;
  /// The tensor's name inside the file (an id in ShardMetadata::strings()).
  uint32_t nameId() const;
  std::string_view name() const;
  llvm::ArrayRef<int64_t> globalOffset() const;
  llvm::ArrayRef<int64_t> localShape() const;
  std::optional<FlatElementRange> flatRange() const;
  /// Elements stored: the flat range's size, or the box's volume.
  int64_t storedElementCount() const;
  /// The xxh3-64 hash (seed 0) of the stored tensor's bytes, when recorded
  /// (metadata "xxh3").
  std::optional<uint64_t> contentHash() const;

private:
  friend class ShardMetadata;
  ShardRef(const ShardMetadata *metadata, ShardId id)
      : metadata_(metadata), id_(id) {}
  const ShardMetadata *metadata_;
  ShardId id_;
};

/// A run of consecutive ids seen through a handle type (TensorRef, ShardRef).
template <typename Ref> class IdRange {
public:
  class iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Ref;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Ref;

    iterator(const ShardMetadata *metadata, uint32_t id)
        : metadata_(metadata), id_(id) {}
    Ref operator*() const;
    iterator &operator++() {
      ++id_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++id_;
      return old;
    }
    friend bool operator==(const iterator &a, const iterator &b) {
      return a.id_ == b.id_;
    }
    friend bool operator!=(const iterator &a, const iterator &b) {
      return a.id_ != b.id_;
    }

  private:
    const ShardMetadata *metadata_;
    uint32_t id_;
  };

  IdRange(const ShardMetadata *metadata, uint32_t begin, uint32_t end)
      : metadata_(metadata), begin_(begin), end_(end) {}
  iterator begin() const { return iterator(metadata_, begin_); }
  iterator end() const { return iterator(metadata_, end_); }
  size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  Ref operator[](size_t i) const {
    return *iterator(metadata_, begin_ + static_cast<uint32_t>(i));
  }

private:
  const ShardMetadata *metadata_;
  uint32_t begin_;
  uint32_t end_;
};

/// One tensor key: a handle into a ShardMetadata, valid while it lives.
class TensorRef {
public:
  TensorId id() const { return id_; }
  std::string_view key() const;
  /// The key's id in ShardMetadata::strings().
  uint32_t keyId() const;
  DType dtype() const;
  size_t ndim() const;
  llvm::ArrayRef<int64_t> globalShape() const;
  /// Its shards, in file order; shards with equal offsets are replicas.
  IdRange<ShardRef> shards() const;
  /// Its first shard's id; its shards are [firstShard, firstShard + count).
  ShardId firstShard() const;
  size_t shardCount() const;

private:
  friend class ShardMetadata;
  TensorRef(const ShardMetadata *metadata, TensorId id)
      : metadata_(metadata), id_(id) {}
  const ShardMetadata *metadata_;
  TensorId id_;
};

class ShardMetadata {
public:
  ShardMetadata() = default;
  ShardMetadata(ShardMetadata &&) = default;
  ShardMetadata &operator=(ShardMetadata &&) = default;
  /// Copies are explicit (clone()): the model can be hundreds of megabytes.
  ShardMetadata(const ShardMetadata &) = delete;
  ShardMetadata &operator=(const ShardMetadata &) = delete;
  ShardMetadata clone() const;

  size_t tensorCount() const { return tensors_.size(); }
  size_t shardCount() const { return shards_.size(); }

  TensorRef tensor(TensorId id) const { return TensorRef(this, id); }
  ShardRef shard(ShardId id) const { return ShardRef(this, id); }
  /// The tensor with this key (a hash lookup).
  std::optional<TensorRef> find(std::string_view key) const {
    if (std::optional<TensorId> id = findTensorId(key))
      return tensor(*id);
    return std::nullopt;
  }

  /// All tensors in file order (the order they were added).
  IdRange<TensorRef> tensors() const {
    return IdRange<TensorRef>(this, 0, static_cast<uint32_t>(tensorCount()));
  }
  /// Tensor ids sorted by key (byte order), the order Paddle iterates in.
  llvm::ArrayRef<TensorId> tensorIdsByKey() const { return keyOrder_; }

  /// Interned tensor keys and in-file names (one pool), and file names.
  const StringPool &strings() const { return strings_; }
  const StringPool &files() const { return files_; }

  /// Heap bytes held by the model (capacity, not just size).
  size_t memoryBytes() const;

private:
  friend class ShardMetadataBuilder;
  friend class TensorRef;
  friend class ShardRef;

  struct TensorRecord {
    uint64_t coordBegin;   ///< first coordinate of its first shard
    uint32_t key;          ///< into strings_
    uint32_t shapeBegin;   ///< into globalShapes_
    uint32_t firstShard;
    uint32_t shardEnd;
    uint32_t flatBegin;    ///< into flatRanges_, or kNoFlatRanges
    uint8_t ndim;
    DType dtype;
  };
  struct ShardRecord {
    TensorId tensor;
    uint32_t rank;
    uint32_t file;
    uint32_t name;
  };
  static constexpr uint32_t kNoFlatRanges = UINT32_MAX;

  std::optional<TensorId> findTensorId(std::string_view key) const;

  const int64_t *coordinates(ShardId id) const {
    const TensorRecord &t = tensors_[shards_[id].tensor];
    return coordinates_.data() + t.coordBegin +
           uint64_t(id - t.firstShard) * 2 * t.ndim;
  }

  std::vector<TensorRecord> tensors_;
  std::vector<ShardRecord> shards_;
  std::vector<int64_t> globalShapes_;
  /// Per shard: global_offset then local_shape (2 * ndim values).
  std::vector<int64_t> coordinates_;
  /// Per shard of a tensor with flat ranges; {0, 0} when that shard has none.
  std::vector<FlatElementRange> flatRanges_;
  std::vector<TensorId> keyOrder_;
  StringPool strings_;
  StringPool files_;
  /// The tensor whose key each string is, or kNotAKey.
  std::vector<TensorId> tensorOfString_;
  static constexpr TensorId kNotAKey = UINT32_MAX;
  /// Per shard, allocated by the first setContentHash (sized to the shards
  /// there were then; later shards grow it as they get one).
  std::vector<uint64_t> contentHashes_;
  std::vector<bool> hasContentHash_;
};

/// Makes a ShardMetadata. Tensors are added one at a time, each followed by
/// its shards (a shard belongs to the tensor added last). The builder stores
/// what it is given: checking geometry against the global shape is the
/// metadata loader's job (it reports located diagnostics).
class ShardMetadataBuilder {
public:
  /// Adds a tensor; nullopt when `key` is already present or globalShape has
  /// more than 255 dimensions.
  std::optional<TensorId> addTensor(std::string_view key, DType dtype,
                                    llvm::ArrayRef<int64_t> globalShape);
  /// A hint that addTensor(`key`, ...) comes next (a parser calls it when
  /// it reads a tensor's key, then reads the tensor's shards).
  void prefetchKey(std::string_view key) const {
    metadata_.strings_.prefetch(key);
  }
  /// Adds a shard to the tensor added last; nullopt when there is none or
  /// globalOffset / localShape do not have its number of dimensions. An
  /// empty flat range ({5, 5}) is stored as no flat range.
  std::optional<ShardId>
  addShard(uint32_t rank, std::string_view file, std::string_view name,
           llvm::ArrayRef<int64_t> globalOffset,
           llvm::ArrayRef<int64_t> localShape,
           std::optional<FlatElementRange> flatRange = std::nullopt);

  /// As addShard above, with file and in-file names interned beforehand
  /// (a loader reuses the ids across shards); nullopt also for an unknown id.
  std::optional<ShardId>
  addShard(uint32_t rank, uint32_t fileId, uint32_t nameId,
           llvm::ArrayRef<int64_t> globalOffset,
           llvm::ArrayRef<int64_t> localShape,
           std::optional<FlatElementRange> flatRange = std::nullopt);
  /// Records the xxh3-64 hash of shard `shard`'s stored bytes, replacing
  /// any earlier one. An id that was not returned by addShard is ignored.
  void setContentHash(ShardId shard, uint64_t hash);

  uint32_t internFile(std::string_view file) {
    return metadata_.files_.intern(file);
  }
  uint32_t internName(std::string_view name) {
    return metadata_.strings_.intern(name);
  }
  /// The id of a tensor's key among the names (an in-file name equal to the
  /// key needs no lookup).
  uint32_t keyNameId(TensorId tensor) const {
    return metadata_.tensors_[tensor].key;
  }

  std::optional<TensorId> find(std::string_view key) const {
    return metadata_.findTensorId(key);
  }
  size_t tensorCount() const { return metadata_.tensorCount(); }
  size_t shardCount() const { return metadata_.shardCount(); }
  /// Capacity hints; `coordinates` counts int64 values (2 * ndim per shard).
  void reserve(size_t tensors, size_t shards, size_t coordinates);

  /// Sorts the key order and hands the model over; the builder is empty
  /// afterwards. With `threads` > 1, a large model's keys are sorted in two
  /// halves at once and merged (the order is the same).
  ShardMetadata finish(unsigned threads = 1);

private:
  ShardMetadata metadata_;
};

//===----------------------------------------------------------------------===//
// Inline accessors (hot in the compiler's loops over a million shards).
//===----------------------------------------------------------------------===//

inline TensorId ShardRef::tensorId() const {
  return metadata_->shards_[id_].tensor;
}
inline uint32_t ShardRef::rank() const { return metadata_->shards_[id_].rank; }
inline uint32_t ShardRef::fileId() const {
  return metadata_->shards_[id_].file;
}
inline std::string_view ShardRef::file() const {
  return metadata_->files_.get(fileId());
}
inline uint32_t ShardRef::nameId() const {
  return metadata_->shards_[id_].name;
}
inline std::string_view ShardRef::name() const {
  return metadata_->strings_.get(nameId());
}
inline llvm::ArrayRef<int64_t> ShardRef::globalOffset() const {
  size_t ndim = metadata_->tensors_[tensorId()].ndim;
  return llvm::ArrayRef<int64_t>(metadata_->coordinates(id_), ndim);
}
inline llvm::ArrayRef<int64_t> ShardRef::localShape() const {
  size_t ndim = metadata_->tensors_[tensorId()].ndim;
  return llvm::ArrayRef<int64_t>(metadata_->coordinates(id_) + ndim, ndim);
}
inline std::optional<FlatElementRange> ShardRef::flatRange() const {
  const ShardMetadata::TensorRecord &t = metadata_->tensors_[tensorId()];
  if (t.flatBegin == ShardMetadata::kNoFlatRanges)
    return std::nullopt;
  const FlatElementRange &range =
      metadata_->flatRanges_[t.flatBegin + (id_ - t.firstShard)];
  if (range.begin == range.end)
    return std::nullopt;
  return range;
}

inline uint32_t TensorRef::keyId() const {
  return metadata_->tensors_[id_].key;
}
inline std::string_view TensorRef::key() const {
  return metadata_->strings_.get(keyId());
}
inline DType TensorRef::dtype() const { return metadata_->tensors_[id_].dtype; }
inline size_t TensorRef::ndim() const { return metadata_->tensors_[id_].ndim; }
inline llvm::ArrayRef<int64_t> TensorRef::globalShape() const {
  const ShardMetadata::TensorRecord &t = metadata_->tensors_[id_];
  return llvm::ArrayRef<int64_t>(metadata_->globalShapes_.data() + t.shapeBegin,
                                 t.ndim);
}
inline ShardId TensorRef::firstShard() const {
  return metadata_->tensors_[id_].firstShard;
}
inline size_t TensorRef::shardCount() const {
  const ShardMetadata::TensorRecord &t = metadata_->tensors_[id_];
  return t.shardEnd - t.firstShard;
}
inline IdRange<ShardRef> TensorRef::shards() const {
  const ShardMetadata::TensorRecord &t = metadata_->tensors_[id_];
  return IdRange<ShardRef>(metadata_, t.firstShard, t.shardEnd);
}

template <typename Ref> Ref IdRange<Ref>::iterator::operator*() const {
  if constexpr (std::is_same_v<Ref, ShardRef>)
    return metadata_->shard(id_);
  else
    return metadata_->tensor(id_);
}

} // namespace aoa

#endif // AOA_IR_SHARDMETADATA_H
