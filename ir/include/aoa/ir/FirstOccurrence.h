//===- FirstOccurrence.h - The first of equal items, found by hash -*- C++ -*-===//
//
// Finding repeats among millions of items (tensors a plan lists twice, reads
// the schedule shares, names a file holds twice) is one pass over an
// open-addressing table far larger than the caches: waiting for each slot
// was most of the work. The hashes are computed first, so that the slot of
// the item some way ahead can be fetched early, and each slot keeps some
// bits of its hash, so that a probe rarely compares two items.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_FIRSTOCCURRENCE_H
#define AOA_IR_FIRSTOCCURRENCE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace aoa {

/// For each item i in [0, count), in order, the first item equal to it (i
/// itself when no earlier item is). `hash(i)`: a 64-bit hash of item i,
/// equal for equal items; `equal(i, j)`: whether items i and j are equal
/// (an equivalence: an item equal to none, itself included, is first).
template <typename Hash, typename Equal>
std::vector<uint32_t> firstOccurrences(size_t count, Hash hash, Equal equal) {
  std::vector<uint32_t> first(count);
  size_t slots = 16;
  while (slots < 2 * count) // at most half full: short probes
    slots *= 2;
  struct Slot {
    uint32_t tag = 0;
    uint32_t item = UINT32_MAX; ///< UINT32_MAX: empty
  };
  std::vector<Slot> table(slots);
  std::vector<uint64_t> hashes(count);
  for (size_t i = 0; i < count; ++i)
    hashes[i] = hash(i);
  constexpr size_t kAhead = 16;
  for (uint32_t i = 0; i < count; ++i) {
    if (i + kAhead < count)
      __builtin_prefetch(&table[size_t(hashes[i + kAhead]) & (slots - 1)]);
    first[i] = i;
    auto tag = uint32_t(hashes[i] >> 32);
    for (size_t slot = size_t(hashes[i]) & (slots - 1);;
         slot = (slot + 1) & (slots - 1)) {
      Slot &s = table[slot];
      if (s.item == UINT32_MAX) {
        s = Slot{tag, i};
        break;
      }
      if (s.tag == tag && equal(s.item, i)) {
        first[i] = s.item;
        break;
      }
    }
  }
  return first;
}

} // namespace aoa

#endif // AOA_IR_FIRSTOCCURRENCE_H
