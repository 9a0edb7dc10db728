//===- InlineIntervals.h - A box's intervals, compactly ---------*- C++ -*-===//
//
// The storage of a Box: up to three intervals inline, more on the heap, in 56
// bytes where llvm::SmallVector<Interval, 3> takes 64 (it keeps a data
// pointer beside its inline elements; this keeps the heap buffer's pointer
// in their place). A compile holds millions of boxes (transfers, plan
// instructions, stored tensors), and most tensors have at most three axes.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_INLINEINTERVALS_H
#define AOA_IR_INLINEINTERVALS_H

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace aoa {

/// The half-open interval [begin, end); empty when end <= begin.
struct Interval {
  int64_t begin = 0;
  int64_t end = 0;

  /// Number of elements (0 when empty, never negative).
  int64_t size() const { return end > begin ? end - begin : 0; }
  bool isEmpty() const { return end <= begin; }
  bool contains(int64_t x) const { return begin <= x && x < end; }

  friend bool operator==(const Interval &a, const Interval &b) {
    return a.begin == b.begin && a.end == b.end;
  }
  friend bool operator!=(const Interval &a, const Interval &b) {
    return !(a == b);
  }
};

/// A fixed-size array of intervals (its size is set when it is made).
class InlineIntervals {
public:
  static constexpr size_t kInline = 3;

  InlineIntervals() = default;
  /// `count` empty intervals.
  explicit InlineIntervals(size_t count) { allocate(count); }
  explicit InlineIntervals(llvm::ArrayRef<Interval> intervals) {
    allocate(intervals.size());
    std::copy(intervals.begin(), intervals.end(), data());
  }
  InlineIntervals(const InlineIntervals &other)
      : InlineIntervals(llvm::ArrayRef<Interval>(other)) {}
  /// Never allocates: inline intervals are copied, a heap buffer taken over.
  InlineIntervals(InlineIntervals &&other) noexcept { takeFrom(other); }
  InlineIntervals &operator=(const InlineIntervals &other) {
    if (this != &other) {
      InlineIntervals copy(other);
      release();
      takeFrom(copy);
    }
    return *this;
  }
  InlineIntervals &operator=(InlineIntervals &&other) noexcept {
    if (this != &other) {
      release();
      takeFrom(other);
    }
    return *this;
  }
  ~InlineIntervals() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Interval *data() { return onHeap() ? heap() : inline_; }
  const Interval *data() const { return onHeap() ? heap() : inline_; }
  Interval &operator[](size_t i) { return data()[i]; }
  const Interval &operator[](size_t i) const { return data()[i]; }
  Interval *begin() { return data(); }
  Interval *end() { return data() + size_; }
  const Interval *begin() const { return data(); }
  const Interval *end() const { return data() + size_; }
  operator llvm::ArrayRef<Interval>() const { return {data(), size_}; }

private:
  static_assert(std::is_trivially_copyable_v<Interval>,
                "intervals are copied as bytes");
  static_assert(sizeof(Interval *) <= sizeof(Interval),
                "the heap pointer is kept in the first inline interval");

  bool onHeap() const { return size_ > kInline; }
  /// The heap buffer's pointer, kept in the bytes of the inline intervals
  /// (read and written with memcpy: they hold no interval then).
  Interval *heap() const {
    Interval *buffer;
    std::memcpy(&buffer, inline_, sizeof buffer);
    return buffer;
  }
  void allocate(size_t count) {
    size_ = static_cast<uint32_t>(count);
    if (onHeap()) {
      // Owned by this object alone: release() frees it, takeFrom() hands
      // it over.
      Interval *buffer = new Interval[count];
      std::memcpy(static_cast<void *>(inline_), &buffer, sizeof buffer);
    }
  }
  void release() {
    if (onHeap())
      delete[] heap();
    size_ = 0;
  }
  /// Takes `other`'s intervals (or its heap buffer) and leaves it empty.
  void takeFrom(InlineIntervals &other) {
    size_ = other.size_;
    std::memcpy(inline_, other.inline_, sizeof inline_);
    other.size_ = 0;
  }

  uint32_t size_ = 0;
  Interval inline_[kInline];
};

} // namespace aoa

#endif // AOA_IR_INLINEINTERVALS_H
