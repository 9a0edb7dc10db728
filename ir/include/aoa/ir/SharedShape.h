//===- SharedShape.h - An immutable shape shared by reference ---*- C++ -*-===//
//
// A plan stores millions of tensors and every shard of a key has the key's
// global shape: a SharedShape is one pointer to an immutable, reference
// counted list of extents, so the shards of a key can share one (the
// compiler's resolve-shard-sources and the plan readers do). Equal shapes
// made separately are equal, only not shared. Reads look like an
// llvm::ArrayRef<int64_t>; a shape is changed only by replacing it whole.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_SHAREDSHAPE_H
#define AOA_IR_SHAREDSHAPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace aoa {

class SharedShape {
public:
  /// The rank-0 shape (a scalar's).
  SharedShape() = default;
  SharedShape(llvm::ArrayRef<int64_t> extents)
      : extents_(extents.empty() ? nullptr : new Counted(extents)) {}
  SharedShape(std::initializer_list<int64_t> extents)
      : SharedShape(llvm::ArrayRef<int64_t>(extents)) {}
  SharedShape(const std::vector<int64_t> &extents)
      : SharedShape(llvm::ArrayRef<int64_t>(extents)) {}

  /// Replaces the shape with the extents [first, last).
  template <typename Iterator> void assign(Iterator first, Iterator last) {
    llvm::SmallVector<int64_t, 4> extents(first, last);
    *this = SharedShape(llvm::ArrayRef<int64_t>(extents));
  }

  llvm::ArrayRef<int64_t> extents() const {
    return extents_ ? llvm::ArrayRef<int64_t>(extents_->extents)
                    : llvm::ArrayRef<int64_t>();
  }
  operator llvm::ArrayRef<int64_t>() const { return extents(); }
  std::vector<int64_t> vec() const { return extents().vec(); }

  size_t size() const { return extents().size(); }
  bool empty() const { return size() == 0; }
  int64_t operator[](size_t axis) const { return extents()[axis]; }
  const int64_t *begin() const { return extents().begin(); }
  const int64_t *end() const { return extents().end(); }
  const int64_t *data() const { return extents().data(); }
  /// True when both share one list (not only equal extents).
  bool sharesWith(const SharedShape &other) const {
    return extents_ == other.extents_;
  }

  friend bool operator==(const SharedShape &a, const SharedShape &b) {
    return a.extents_ == b.extents_ || a.extents() == b.extents();
  }
  friend bool operator!=(const SharedShape &a, const SharedShape &b) {
    return !(a == b);
  }
  friend bool operator==(const SharedShape &a, llvm::ArrayRef<int64_t> b) {
    return a.extents() == b;
  }
  friend bool operator!=(const SharedShape &a, llvm::ArrayRef<int64_t> b) {
    return !(a == b);
  }

private:
  /// Counted atomically: copies on several threads share one list.
  struct Counted : llvm::ThreadSafeRefCountedBase<Counted> {
    explicit Counted(llvm::ArrayRef<int64_t> extents)
        : extents(extents.begin(), extents.end()) {}
    /// Inline up to 4 axes: one allocation per shape.
    const llvm::SmallVector<int64_t, 4> extents;
  };
  llvm::IntrusiveRefCntPtr<const Counted> extents_; ///< null for rank 0
};

} // namespace aoa

#endif // AOA_IR_SHAREDSHAPE_H
