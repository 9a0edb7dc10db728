//===- ShardMetadata.cpp ---------------------------------------------------===//
#include "aoa/ir/ShardMetadata.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <future>
#include <system_error>

namespace aoa {

//===----------------------------------------------------------------------===//
// StringPool
//===----------------------------------------------------------------------===//

namespace {

uint32_t hashString(std::string_view text) {
  size_t h = std::hash<std::string_view>()(text);
  return static_cast<uint32_t>(h ^ (uint64_t(h) >> 32));
}

/// std::string_view's order (unsigned bytes, then length), eight bytes at a
/// time: keys share long prefixes ("deepseek.layers.12.mlp.experts."), and
/// sorting 200k of them was dominated by calls to memcmp.
bool bytewiseLess(std::string_view a, std::string_view b) {
  size_t common = std::min(a.size(), b.size());
  size_t i = 0;
  for (; i + 8 <= common; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y)
      return __builtin_bswap64(x) < __builtin_bswap64(y);
  }
  for (; i < common; ++i)
    if (a[i] != b[i])
      return static_cast<unsigned char>(a[i]) <
             static_cast<unsigned char>(b[i]);
  return a.size() < b.size();
}

template <typename T> size_t capacityBytes(const std::vector<T> &v) {
  return v.capacity() * sizeof(T);
}

} // namespace

size_t StringPool::findSlot(std::string_view text, uint32_t hash) const {
  size_t mask = slots_.size() - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    uint64_t entry = slots_[slot];
    if (entry == 0)
      return slot;
    if (uint32_t(entry >> 32) == hash && get(uint32_t(entry) - 1) == text)
      return slot;
  }
}

void StringPool::rehash(size_t slotCount) {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(slotCount, 0);
  size_t mask = slotCount - 1;
  for (uint64_t entry : old) {
    if (entry == 0)
      continue;
    size_t slot = (entry >> 32) & mask;
    while (slots_[slot] != 0)
      slot = (slot + 1) & mask;
    slots_[slot] = entry;
  }
}

uint32_t StringPool::intern(std::string_view text, bool *inserted) {
  if (begins_.empty()) // a moved-from pool
    begins_.push_back(0);
  // Keep the table at most half full so probes stay short.
  if (2 * (size_t(size()) + 1) > slots_.size())
    rehash(std::max<size_t>(16, 2 * slots_.size()));
  uint32_t hash = hashString(text);
  size_t slot = findSlot(text, hash);
  if (slots_[slot] != 0) {
    if (inserted)
      *inserted = false;
    return uint32_t(slots_[slot]) - 1;
  }
  uint32_t id = size();
  bytes_.append(text.data(), text.size());
  begins_.push_back(bytes_.size());
  slots_[slot] = uint64_t(hash) << 32 | (uint64_t(id) + 1);
  if (inserted)
    *inserted = true;
  return id;
}

std::optional<uint32_t> StringPool::find(std::string_view text) const {
  if (slots_.empty())
    return std::nullopt;
  size_t slot = findSlot(text, hashString(text));
  if (slots_[slot] == 0)
    return std::nullopt;
  return uint32_t(slots_[slot]) - 1;
}

void StringPool::prefetch(std::string_view text) const {
  if (!slots_.empty())
    __builtin_prefetch(&slots_[hashString(text) & (slots_.size() - 1)]);
}

void StringPool::reserve(size_t strings, size_t bytes) {
  bytes_.reserve(bytes);
  begins_.reserve(strings + 1);
  size_t slotCount = 16;
  while (slotCount < 2 * strings)
    slotCount *= 2;
  if (slotCount > slots_.size())
    rehash(slotCount);
}

size_t StringPool::memoryBytes() const {
  return bytes_.capacity() + capacityBytes(begins_) + capacityBytes(slots_);
}

//===----------------------------------------------------------------------===//
// Shapes and element ranges
//===----------------------------------------------------------------------===//

std::optional<int64_t> elementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    if (extent < 0 || __builtin_mul_overflow(count, extent, &count))
      return std::nullopt;
  }
  return count;
}

std::string formatElementRange(llvm::ArrayRef<int64_t> offset,
                               llvm::ArrayRef<int64_t> shape) {
  std::string out = "[";
  size_t ndim = std::min(offset.size(), shape.size());
  for (size_t i = 0; i < ndim; ++i) {
    if (i)
      out += ", ";
    int64_t end;
    out += std::to_string(offset[i]) + ":";
    // Geometry diagnostics print boxes that may overflow; say so plainly.
    out += __builtin_add_overflow(offset[i], shape[i], &end)
               ? std::string("overflow")
               : std::to_string(end);
  }
  return out + "]";
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

//===----------------------------------------------------------------------===//
// ShardRef, ShardMetadata
//===----------------------------------------------------------------------===//

int64_t ShardRef::storedElementCount() const {
  if (std::optional<FlatElementRange> range = flatRange())
    return range->size();
  return elementCount(localShape()).value_or(0);
}

std::optional<uint64_t> ShardRef::contentHash() const {
  if (id_ >= metadata_->hasContentHash_.size() ||
      !metadata_->hasContentHash_[id_])
    return std::nullopt;
  return metadata_->contentHashes_[id_];
}

ShardMetadata ShardMetadata::clone() const {
  ShardMetadata copy;
  copy.tensors_ = tensors_;
  copy.shards_ = shards_;
  copy.globalShapes_ = globalShapes_;
  copy.coordinates_ = coordinates_;
  copy.flatRanges_ = flatRanges_;
  copy.keyOrder_ = keyOrder_;
  copy.strings_ = strings_;
  copy.files_ = files_;
  copy.tensorOfString_ = tensorOfString_;
  copy.contentHashes_ = contentHashes_;
  copy.hasContentHash_ = hasContentHash_;
  return copy;
}

std::optional<TensorId>
ShardMetadata::findTensorId(std::string_view key) const {
  std::optional<uint32_t> string = strings_.find(key);
  if (!string || *string >= tensorOfString_.size() ||
      tensorOfString_[*string] == kNotAKey)
    return std::nullopt;
  return tensorOfString_[*string];
}

size_t ShardMetadata::memoryBytes() const {
  return capacityBytes(tensors_) + capacityBytes(shards_) +
         capacityBytes(globalShapes_) + capacityBytes(coordinates_) +
         capacityBytes(flatRanges_) + capacityBytes(keyOrder_) +
         capacityBytes(tensorOfString_) + strings_.memoryBytes() +
         files_.memoryBytes() + capacityBytes(contentHashes_) +
         hasContentHash_.capacity() / 8;
}

//===----------------------------------------------------------------------===//
// ShardMetadataBuilder
//===----------------------------------------------------------------------===//

std::optional<TensorId>
ShardMetadataBuilder::addTensor(std::string_view key, DType dtype,
                                llvm::ArrayRef<int64_t> globalShape) {
  if (globalShape.size() > UINT8_MAX)
    return std::nullopt;
  ShardMetadata &m = metadata_;
  uint32_t string = m.strings_.intern(key);
  if (string >= m.tensorOfString_.size())
    m.tensorOfString_.resize(string + 1, ShardMetadata::kNotAKey);
  if (m.tensorOfString_[string] != ShardMetadata::kNotAKey)
    return std::nullopt; // the key is taken
  TensorId id = static_cast<TensorId>(m.tensors_.size());
  m.tensorOfString_[string] = id;
  ShardMetadata::TensorRecord record;
  record.key = string;
  record.coordBegin = m.coordinates_.size();
  record.shapeBegin = static_cast<uint32_t>(m.globalShapes_.size());
  record.firstShard = static_cast<uint32_t>(m.shards_.size());
  record.shardEnd = record.firstShard;
  record.flatBegin = ShardMetadata::kNoFlatRanges;
  record.ndim = static_cast<uint8_t>(globalShape.size());
  record.dtype = dtype;
  m.tensors_.push_back(record);
  m.globalShapes_.insert(m.globalShapes_.end(), globalShape.begin(),
                         globalShape.end());
  return id;
}

std::optional<ShardId> ShardMetadataBuilder::addShard(
    uint32_t rank, std::string_view file, std::string_view name,
    llvm::ArrayRef<int64_t> globalOffset, llvm::ArrayRef<int64_t> localShape,
    std::optional<FlatElementRange> flatRange) {
  // Check before interning, so a refused shard leaves no names behind.
  ShardMetadata &m = metadata_;
  if (m.tensors_.empty() || globalOffset.size() != m.tensors_.back().ndim ||
      localShape.size() != m.tensors_.back().ndim)
    return std::nullopt;
  return addShard(rank, internFile(file), internName(name), globalOffset,
                  localShape, flatRange);
}

std::optional<ShardId> ShardMetadataBuilder::addShard(
    uint32_t rank, uint32_t fileId, uint32_t nameId,
    llvm::ArrayRef<int64_t> globalOffset, llvm::ArrayRef<int64_t> localShape,
    std::optional<FlatElementRange> flatRange) {
  ShardMetadata &m = metadata_;
  if (m.tensors_.empty() || fileId >= m.files_.size() ||
      nameId >= m.strings_.size())
    return std::nullopt;
  ShardMetadata::TensorRecord &tensor = m.tensors_.back();
  if (globalOffset.size() != tensor.ndim || localShape.size() != tensor.ndim)
    return std::nullopt;
  // Ids are uint32: refuse the shard that would not fit.
  if (m.shards_.size() >= UINT32_MAX)
    return std::nullopt;

  ShardId id = static_cast<ShardId>(m.shards_.size());
  TensorId tensorId = static_cast<TensorId>(m.tensors_.size() - 1);
  m.shards_.push_back(
      ShardMetadata::ShardRecord{tensorId, rank, fileId, nameId});
  m.coordinates_.insert(m.coordinates_.end(), globalOffset.begin(),
                        globalOffset.end());
  m.coordinates_.insert(m.coordinates_.end(), localShape.begin(),
                        localShape.end());
  ++tensor.shardEnd;

  // Flat ranges are stored per shard only for tensors that have one; the
  // tensor's earlier shards get the "none" entry {0, 0} when the first
  // flat shard arrives.
  if (flatRange && tensor.flatBegin == ShardMetadata::kNoFlatRanges) {
    tensor.flatBegin = static_cast<uint32_t>(m.flatRanges_.size());
    m.flatRanges_.resize(m.flatRanges_.size() + (id - tensor.firstShard));
  }
  if (tensor.flatBegin != ShardMetadata::kNoFlatRanges)
    m.flatRanges_.push_back(flatRange.value_or(FlatElementRange{}));
  return id;
}

void ShardMetadataBuilder::setContentHash(ShardId shard, uint64_t hash) {
  ShardMetadata &m = metadata_;
  if (shard >= m.shards_.size())
    return;
  if (shard >= m.contentHashes_.size()) {
    m.contentHashes_.resize(m.shards_.size(), 0);
    m.hasContentHash_.resize(m.shards_.size(), false);
  }
  m.contentHashes_[shard] = hash;
  m.hasContentHash_[shard] = true;
}

void ShardMetadataBuilder::reserve(size_t tensors, size_t shards,
                                   size_t coordinates) {
  ShardMetadata &m = metadata_;
  m.tensors_.reserve(tensors);
  m.shards_.reserve(shards);
  m.globalShapes_.reserve(tensors * 2);
  m.coordinates_.reserve(coordinates);
  m.strings_.reserve(tensors, tensors * 48);
  m.tensorOfString_.reserve(tensors);
}

ShardMetadata ShardMetadataBuilder::finish(unsigned threads) {
  ShardMetadata &m = metadata_;
  m.keyOrder_.resize(m.tensors_.size());
  for (TensorId id = 0; id < m.keyOrder_.size(); ++id)
    m.keyOrder_[id] = id;
  auto keyLess = [&m](TensorId a, TensorId b) {
    return bytewiseLess(m.strings_.get(m.tensors_[a].key),
                        m.strings_.get(m.tensors_[b].key));
  };
  // Keys are unique, so the halves merge into the one sorted order. Below
  // this many, a thread costs more than it saves.
  constexpr size_t kKeysWorthASecondThread = 1 << 15;
  auto begin = m.keyOrder_.begin(), end = m.keyOrder_.end();
  if (threads > 1 && m.keyOrder_.size() >= kKeysWorthASecondThread) {
    auto middle = begin + m.keyOrder_.size() / 2;
    std::future<void> upper;
    try {
      upper = std::async(std::launch::async,
                         [&] { std::sort(middle, end, keyLess); });
    } catch (const std::system_error &) {
      std::sort(middle, end, keyLess); // no thread to be had: here, then
    }
    std::sort(begin, middle, keyLess);
    if (upper.valid())
      upper.get();
    std::inplace_merge(begin, middle, end, keyLess);
  } else {
    std::sort(begin, end, keyLess);
  }
  ShardMetadata result = std::move(metadata_);
  metadata_ = ShardMetadata();
  return result;
}

} // namespace aoa
