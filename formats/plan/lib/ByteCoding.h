//===- ByteCoding.h - Little-endian bytes in and out ------------*- C++ -*-===//
//
// ByteWriter appends fixed-width little-endian integers; ByteCursor reads
// them back from a span whose length the caller has checked (every read has
// a precondition, has(n), that the decoder checks first).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_BYTECODING_H
#define AOA_FORMATS_PLAN_LIB_BYTECODING_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace aoa {
namespace binplan {

class ByteWriter {
public:
  void u8(uint8_t v) { put(v, 1); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i64(int64_t v) { put(uint64_t(v), 8); }
  void raw(std::string_view data) {
    char *at = extend(data.size());
    if (!data.empty())
      std::memcpy(at, data.data(), data.size());
  }
  /// Zero bytes up to the next multiple of 8.
  void padTo8() {
    size_t pad = (8 - size_ % 8) % 8;
    std::memset(extend(pad), 0, pad);
  }
  /// Overwrites 8 bytes at `offset` (a field reserved earlier).
  void patch64(size_t offset, uint64_t v) {
    for (int i = 0; i < 8; ++i)
      buffer_[offset + i] = char(uint8_t(v >> (8 * i)));
  }
  size_t size() const { return size_; }
  void reserve(size_t bytes) {
    if (buffer_.size() < bytes)
      buffer_.resize(bytes);
  }
  std::string_view bytes() const { return {buffer_.data(), size_}; }
  std::string take() {
    buffer_.resize(size_);
    size_ = 0;
    return std::move(buffer_);
  }
  /// Empties the writer and keeps its memory, for a writer reused as scratch.
  void clear() { size_ = 0; }

private:
  /// `n` more bytes at the end, to be written by the caller. The buffer is
  /// grown ahead and its length kept apart: a plan writes tens of millions
  /// of fields, and std::string's append is a call each.
  char *extend(size_t n) {
    if (buffer_.size() - size_ < n)
      buffer_.resize(std::max({2 * buffer_.size(), size_ + n, size_t(64)}));
    char *at = buffer_.data() + size_;
    size_ += n;
    return at;
  }
  void put(uint64_t v, int width) {
    char *at = extend(size_t(width));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    // The low `width` bytes of v in memory are its little-endian encoding.
    std::memcpy(at, &v, size_t(width));
#else
    for (int i = 0; i < width; ++i)
      at[i] = char(uint8_t(v >> (8 * i)));
#endif
  }
  std::string buffer_; ///< [0, size_) written; the rest is room
  size_t size_ = 0;
};

class ByteCursor {
public:
  explicit ByteCursor(std::string_view bytes) : bytes_(bytes) {}
  size_t offset() const { return at_; }
  size_t remaining() const { return bytes_.size() - at_; }
  bool has(uint64_t n) const { return n <= remaining(); }
  uint8_t u8() { return uint8_t(get(1)); }
  uint16_t u16() { return uint16_t(get(2)); }
  uint32_t u32() { return uint32_t(get(4)); }
  uint64_t u64() { return get(8); }
  int64_t i64() { return int64_t(get(8)); }
  std::string_view take(size_t n) {
    std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }

private:
  uint64_t get(int width) {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i)
      v |= uint64_t(uint8_t(bytes_[at_ + i])) << (8 * i);
    at_ += width;
    return v;
  }
  std::string_view bytes_;
  size_t at_ = 0;
};

} // namespace binplan
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_BYTECODING_H
