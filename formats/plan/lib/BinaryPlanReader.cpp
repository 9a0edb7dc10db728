//===- BinaryPlanReader.cpp - Binary container -> Plan --------------------===//
//
// The reading entry points: the whole plan from memory or a file, or the
// shared tables and one rank's section of a file (PlanDecoder.h checks).
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/BinaryPlan.h"

#include "ByteSource.h"
#include "PlanDecoder.h"

namespace aoa {
namespace binplan {

namespace {

std::optional<plan::Plan> decodeAll(const std::string &path,
                                    ByteSource &source,
                                    DiagnosticEngine &diags,
                                    PlanOrigin *origin) {
  PlanDecoder decoder(path, source, diags);
  if (!decoder.header(origin) || !decoder.shared())
    return std::nullopt;
  for (uint32_t r = 0; r < decoder.ranks(); ++r)
    if (!decoder.rank(r))
      return std::nullopt;
  return decoder.take();
}

std::optional<plan::Plan> decodeRank(const std::string &path,
                                     ByteSource &source, uint32_t rank,
                                     DiagnosticEngine &diags,
                                     PlanOrigin *origin, AbsentRank absent) {
  PlanDecoder decoder(path, source, diags);
  if (!decoder.header(origin))
    return std::nullopt;
  bool present = rank < decoder.ranks();
  if (!present && absent == AbsentRank::Refuse) {
    diags.error(SourceLocation{}, "the plan '" + path + "' has " +
                                      std::to_string(decoder.ranks()) +
                                      " ranks; there is no rank " +
                                      std::to_string(rank));
    return std::nullopt;
  }
  if (!decoder.shared() || (present && !decoder.rank(rank)))
    return std::nullopt;
  plan::Plan plan = decoder.take();
  plan.onlyRank = rank;
  return plan;
}

} // namespace

std::optional<plan::Plan> readBinaryPlanBytes(const std::string &path,
                                              std::string_view bytes,
                                              DiagnosticEngine &diags,
                                              PlanOrigin *origin) {
  MemorySource source(bytes);
  return decodeAll(path, source, diags, origin);
}

std::optional<plan::Plan> readBinaryPlan(const std::string &path,
                                         DiagnosticEngine &diags,
                                         PlanOrigin *origin) {
  FileSource source;
  std::string error;
  if (!source.open(path, error)) {
    diags.error(SourceLocation{}, "cannot open the plan '" + path + "': " + error);
    return std::nullopt;
  }
  return decodeAll(path, source, diags, origin);
}

std::optional<plan::Plan> readBinaryPlanRank(const std::string &path,
                                             uint32_t rank,
                                             DiagnosticEngine &diags,
                                             PlanOrigin *origin,
                                             AbsentRank absent) {
  FileSource source;
  std::string error;
  if (!source.open(path, error)) {
    diags.error(SourceLocation{}, "cannot open the plan '" + path + "': " + error);
    return std::nullopt;
  }
  return decodeRank(path, source, rank, diags, origin, absent);
}

std::optional<plan::Plan> readBinaryPlanRankBytes(const std::string &path,
                                                  std::string_view bytes,
                                                  uint32_t rank,
                                                  DiagnosticEngine &diags,
                                                  PlanOrigin *origin,
                                                  AbsentRank absent) {
  MemorySource source(bytes);
  return decodeRank(path, source, rank, diags, origin, absent);
}

} // namespace binplan
} // namespace aoa
