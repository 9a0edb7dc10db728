//===- PlanCoverage.cpp ---------------------------------------------------===//
#include "PlanCoverage.h"

#include "aoa/ir/BoxOverlap.h"
#include "aoa/ir/FlatRange.h"
#include "aoa/ir/ShardMetadata.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace aoa {

namespace {

using Kind = PlanSite::Kind;
using Field = PlanSite::Field;

/// Cutting boxes out of boxes can fragment without bound on a hostile plan;
/// past this many missing boxes the check gives up with an error.
constexpr size_t kMaxFragments = 1 << 20;

constexpr const char *kWriteHint =
    "the plan does not write every destination element exactly once; "
    "recompile it (aoa-compile checks this)";

PlanSite tensorSite(bool destination, uint32_t tensor, Field field) {
  PlanSite site;
  site.kind = destination ? Kind::DestinationTensor : Kind::SourceTensor;
  site.index = tensor;
  site.field = field;
  return site;
}

struct WriteRef {
  uint32_t rank, round, instruction;
  const Box *region;
};

PlanSite writeSite(const WriteRef &write) {
  PlanSite site;
  site.kind = Kind::Instruction;
  site.index = write.rank;
  site.round = write.round;
  site.instruction = write.instruction;
  site.field = Field::Region;
  return site;
}

std::string typeOf(const plan::StoredTensor &t) {
  return std::string(dtypeName(t.dtype)) + formatShape(t.globalShape);
}

/// `'file': tensor 'name' (key[box])`.
std::string describe(const plan::Plan &plan, const plan::StoredTensor &t) {
  return "'" + plan.destinationFiles[t.file].path + "': tensor '" + t.name +
         "' (" + t.key + t.box.toString() + ")";
}

/// The boxes `t` stores whole: its box, or the boxes of its flat range.
std::vector<Box> storedPieces(const plan::StoredTensor &t) {
  if (!t.flat)
    return {t.box};
  std::vector<Box> boxes;
  for (FlatPiece &piece : flatRangeToBoxes(t.box, t.flat->begin, t.flat->end))
    boxes.push_back(std::move(piece.box));
  return boxes;
}

/// The elements of the disjoint boxes `whole` that none of `pieces` holds,
/// as disjoint boxes; nullopt when that takes more than kMaxFragments boxes.
std::optional<std::vector<Box>> uncovered(std::vector<Box> whole,
                                          llvm::ArrayRef<const Box *> pieces) {
  for (const Box *piece : pieces) {
    std::vector<Box> rest;
    for (const Box &box : whole)
      for (Box &part : subtract(box, *piece))
        rest.push_back(std::move(part));
    if (rest.size() > kMaxFragments)
      return std::nullopt;
    whole = std::move(rest);
    if (whole.empty())
      break;
  }
  return whole;
}

int64_t volumeOf(const std::vector<Box> &boxes) {
  int64_t total = 0;
  for (const Box &box : boxes)
    total += box.volume();
  return total;
}

/// Whether `pieces`, each inside a set of `expected` elements, hold all of
/// it exactly once: pairwise disjoint with volumes adding up to `expected`.
bool tilesExactly(llvm::ArrayRef<const Box *> pieces, int64_t expected) {
  int64_t total = 0;
  for (const Box *piece : pieces)
    if (__builtin_add_overflow(total, piece->volume(), &total))
      return false;
  return total == expected &&
         !findOverlappingPair(std::vector<const Box *>(pieces.begin(),
                                                       pieces.end()));
}

class CoverageChecker {
public:
  CoverageChecker(const plan::Plan &plan,
                  llvm::function_ref<bool(CoverageFinding)> report,
                  std::optional<uint32_t> onlyRank)
      : plan_(plan), report_(report), onlyRank_(onlyRank) {}

  void run() {
    groupKeys(false); // a source key's tensors need only agree
    KeyGroups destinationKeys = groupKeys(true);
    if (stopped_)
      return;
    for (size_t k = 0; k < destinationKeys.count(); ++k)
      if (!stopped_ && destinationKeys.consistent[k])
        checkKeyStored(destinationKeys.key(k));
    checkWrites();
  }

private:
  bool report(CoverageFinding finding) {
    if (!stopped_ && !report_(std::move(finding)))
      stopped_ = true;
    return !stopped_;
  }

  /// The tensors of each key, in plan order, as one flat array: key k's
  /// tensors are tensors[begin[k] .. begin[k + 1]).
  struct KeyGroups {
    std::vector<uint32_t> tensors;
    std::vector<size_t> begin;
    std::vector<bool> consistent;
    size_t count() const { return consistent.size(); }
    llvm::ArrayRef<uint32_t> key(size_t k) const {
      return llvm::ArrayRef<uint32_t>(tensors).slice(begin[k],
                                                     begin[k + 1] - begin[k]);
    }
  };

  /// Groups the tensors of one side by key; reports tensors that disagree
  /// with the key's first one on its dtype or global shape (their keys are
  /// marked inconsistent).
  KeyGroups groupKeys(bool destination) {
    const std::vector<plan::StoredTensor> &tensors =
        destination ? plan_.destinationTensors : plan_.sourceTensors;
    const char *side = destination ? "destination" : "source";
    std::unordered_map<std::string_view, uint32_t> byKey;
    byKey.reserve(tensors.size());
    std::vector<uint32_t> keyOf(tensors.size());
    std::vector<uint32_t> firstOf; // each key's first tensor
    KeyGroups groups;
    for (uint32_t i = 0; i < tensors.size() && !stopped_; ++i) {
      const plan::StoredTensor &t = tensors[i];
      auto [it, inserted] =
          byKey.emplace(t.key, uint32_t(firstOf.size()));
      keyOf[i] = it->second;
      if (inserted) {
        firstOf.push_back(i);
        groups.consistent.push_back(true);
        continue;
      }
      uint32_t first = firstOf[it->second];
      const plan::StoredTensor &f = tensors[first];
      if (t.dtype == f.dtype && t.globalShape == f.globalShape)
        continue;
      groups.consistent[it->second] = false;
      CoverageFinding finding;
      finding.site = tensorSite(destination, i, Field::Type);
      finding.message = std::string(side) + " key '" + t.key + "' is " +
                        typeOf(t) + " here, but " + typeOf(f) + " in " + side +
                        " tensor " + std::to_string(first);
      finding.noteSite = tensorSite(destination, first, Field::Type);
      finding.note = "the key's first tensor";
      finding.hint = "every stored tensor of a key gives the key's dtype and "
                     "whole (global) shape; recompile the plan";
      report(std::move(finding));
    }
    if (stopped_)
      return groups;
    // A counting sort by key keeps each key's tensors in plan order.
    groups.begin.assign(firstOf.size() + 1, 0);
    for (uint32_t k : keyOf)
      ++groups.begin[k + 1];
    for (size_t k = 0; k < firstOf.size(); ++k)
      groups.begin[k + 1] += groups.begin[k];
    std::vector<size_t> next(groups.begin.begin(), groups.begin.end() - 1);
    groups.tensors.resize(tensors.size());
    for (uint32_t i = 0; i < tensors.size(); ++i)
      groups.tensors[next[keyOf[i]]++] = i;
    return groups;
  }

  /// The destination tensors `key` of one key store every element of it.
  void checkKeyStored(llvm::ArrayRef<uint32_t> key) {
    const plan::StoredTensor &first = plan_.destinationTensors[key.front()];
    // Replicas store the same pieces: count each once.
    std::vector<Box> pieces;
    for (uint32_t t : key)
      for (Box &piece : storedPieces(plan_.destinationTensors[t]))
        pieces.push_back(std::move(piece));
    sortAndRemoveDuplicates(pieces);
    std::vector<const Box *> refs;
    for (const Box &piece : pieces)
      refs.push_back(&piece);
    Box whole = Box::fromShape(first.globalShape);
    if (tilesExactly(refs, whole.volume()))
      return;
    std::optional<std::vector<Box>> missing = uncovered({whole}, refs);
    if (missing && missing->empty())
      return; // overlapping tensors that together hold the key
    CoverageFinding finding;
    finding.site = tensorSite(true, key.front(), Field::Type);
    finding.hint = "the destination tensors of a key must together hold its "
                   "whole global shape; recompile the plan (aoa-compile "
                   "checks this)";
    if (!missing)
      finding.message = "destination key '" + first.key + "' (" +
                        typeOf(first) + "): its " +
                        std::to_string(key.size()) +
                        " destination tensors overlap in too many pieces to "
                        "check that they store all of it";
    else
      finding.message =
          "destination key '" + first.key + "' (" + typeOf(first) + "): " +
          std::to_string(volumeOf(*missing)) + " of its " +
          std::to_string(whole.volume()) +
          " elements are stored in no destination tensor, e.g. " + first.key +
          missing->front().toString();
    report(std::move(finding));
  }

  /// Every destination tensor's stored elements are written exactly once.
  void checkWrites() {
    std::vector<std::vector<WriteRef>> writes(plan_.destinationTensors.size());
    for (uint32_t r = 0; r < plan_.programs.size(); ++r)
      for (uint32_t k = 0; (!onlyRank_ || r == *onlyRank_) &&
                           k < plan_.programs[r].rounds.size();
           ++k) {
        const std::vector<plan::Instruction> &list =
            plan_.programs[r].rounds[k].instructions;
        for (uint32_t i = 0; i < list.size(); ++i)
          if (list[i].opcode == plan::Opcode::Write)
            writes[list[i].tensor].push_back(WriteRef{r, k, i, &list[i].region});
      }
    for (uint32_t t = 0; t < writes.size() && !stopped_; ++t)
      if (!onlyRank_ ||
          plan_.destinationFiles[plan_.destinationTensors[t].file].rank ==
              *onlyRank_)
        checkTensorWrites(t, writes[t]);
  }

  void checkTensorWrites(uint32_t tensor, const std::vector<WriteRef> &writes) {
    const plan::StoredTensor &t = plan_.destinationTensors[tensor];
    std::vector<const Box *> regions;
    for (const WriteRef &write : writes)
      regions.push_back(write.region);
    if (std::optional<std::pair<size_t, size_t>> pair =
            findOverlappingPair(regions)) {
      size_t later = std::max(pair->first, pair->second);
      size_t earlier = std::min(pair->first, pair->second);
      CoverageFinding finding;
      finding.site = writeSite(writes[later]);
      finding.message =
          describe(plan_, t) + ": " + t.key +
          intersect(*regions[earlier], *regions[later])->toString() +
          " is written twice";
      finding.noteSite = writeSite(writes[earlier]);
      finding.note = "the other write";
      finding.hint = kWriteHint;
      report(std::move(finding));
      return;
    }
    int64_t stored = t.storedElements();
    if (tilesExactly(regions, stored))
      return;
    // Regions are disjoint and inside the stored elements: some are missing.
    std::optional<std::vector<Box>> missing =
        uncovered(storedPieces(t), regions);
    CoverageFinding finding;
    finding.site = tensorSite(true, tensor, Field::Box);
    int64_t written = 0;
    for (const Box *region : regions)
      written += region->volume();
    finding.message = describe(plan_, t) + ": " +
                      std::to_string(stored - written) + " of its " +
                      std::to_string(stored) + " elements are never written";
    if (missing && !missing->empty())
      finding.message += ", e.g. " + t.key + missing->front().toString();
    finding.hint = kWriteHint;
    report(std::move(finding));
  }

  const plan::Plan &plan_;
  llvm::function_ref<bool(CoverageFinding)> report_;
  std::optional<uint32_t> onlyRank_;
  bool stopped_ = false;
};

} // namespace

void checkPlanCoverage(const plan::Plan &plan,
                       llvm::function_ref<bool(CoverageFinding)> report,
                       std::optional<uint32_t> onlyRank) {
  CoverageChecker(plan, report, onlyRank).run();
}

} // namespace aoa
