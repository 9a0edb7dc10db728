//===- EntryFacts.h - What binding reads of an answer's entry ---*- C++ -*-===//
//
// resolve-shard-sources binds every entry of find_shard_sources' answers to
// source replicas. It reads only an entry's two boxes, its target's dtype,
// whether the target is an optimizer state and its postprocess list; the
// finder (ShardSourceFinder.h) records those instead of a MappingEntry, whose
// keys, shapes and strings would be copied for millions of entries.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_PASSES_LIB_ENTRYFACTS_H
#define AOA_PASSES_LIB_ENTRYFACTS_H

#include "aoa/ir/Box.h"
#include "aoa/ir/DType.h"
#include "aoa/ir/View.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace aoa {

/// The postprocess lists of answers, each distinct list kept once for the
/// owner's life (a conversion has a handful), so that an entry's facts point
/// at their list instead of copying it, and equal lists have one address.
class PostprocessLists {
public:
  /// The list of `transform`, interned.
  const std::vector<std::string> &
  intern(const std::shared_ptr<const Transform> &transform);
  const std::vector<std::string> &intern(const std::vector<std::string> &list);

private:
  std::deque<std::vector<std::string>> lists_; ///< addresses never move
  const std::vector<std::string> *last_ = nullptr;
  /// The transform last interned, held so that its address stays its own
  /// (consecutive entries mostly come from one transform).
  std::shared_ptr<const Transform> lastTransform_;
};

/// What binding reads of an answer's entry. The entry's keys are the
/// destination tensor's and the stored source tensor's.
struct EntryFacts {
  Box wanted; ///< the source region (entry.source's box)
  Box target; ///< where it goes (entry.target's box)
  /// The target key is an optimizer state (splitOptimizerSuffix): casts
  /// written for the model weight do not apply to it.
  bool optimizerState = false;
  DType targetType = DType::F32; ///< entry.target.dtype
  /// entry.postprocess, interned in a PostprocessLists that outlives the
  /// facts.
  const std::vector<std::string> *postprocess = nullptr;
};

} // namespace aoa

#endif // AOA_PASSES_LIB_ENTRYFACTS_H
