//===- TextPlanLocator.h - Verifier findings back to plan lines -*- C++ -*-===//
//
// The reader remembers only where each line of the plan starts (one offset
// per instruction); to point a finding at a field of a line, the locator
// parses that line again (PlanLineParser.h records where its fields start).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_TEXTPLANLOCATOR_H
#define AOA_FORMATS_PLAN_LIB_TEXTPLANLOCATOR_H

#include "PlanLineParser.h"
#include "PlanSite.h"

#include "aoa/ir/SourceManager.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace aoa {
namespace plantext {

/// Where each part of the plan was read, by the byte offset of its line.
struct LineTable {
  size_t header = 0;
  size_t ranks = 0;
  size_t memoryBudget = 0;
  size_t destinationFormat = 0;
  size_t sourceAccess = 0;
  std::vector<size_t> sourceFiles, destinationFiles;
  std::vector<size_t> sourceTensors, destinationTensors;
  std::vector<size_t> addedKeys;
  std::vector<size_t> copiedFiles;
  std::vector<size_t> rankBlocks;
  /// Per rank, per round: the round line, then its instructions' lines.
  std::vector<std::vector<std::vector<size_t>>> rounds;
};

/// The line at byte `offset` of `text`, without its terminator.
std::string_view lineAt(std::string_view text, size_t offset);

/// Locates verifier findings in the plan text registered as `buffer`.
class TextPlanLocator : public PlanLocator {
public:
  TextPlanLocator(const SourceManager &sources, uint32_t buffer,
                  const LineTable &lines)
      : sources_(sources), buffer_(buffer), lines_(lines) {}

  SourceLocation locate(const PlanSite &site) const override;

private:
  /// The offset of the line the site is on; nullopt for an unknown site.
  std::optional<size_t> lineOf(const PlanSite &site) const;
  /// The offset of the site's field within its (parsed) line.
  static size_t fieldOffset(const LineSites &sites, const PlanSite &site);

  const SourceManager &sources_;
  uint32_t buffer_;
  const LineTable &lines_;
};

} // namespace plantext
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_TEXTPLANLOCATOR_H
