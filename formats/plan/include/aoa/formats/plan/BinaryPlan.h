//===- BinaryPlan.h - The plan's binary container ---------------*- C++ -*-===//
//
// The compact form of a plan (docs/plan-format.md, "Binary form"): a fixed
// header, a section directory, shared tables (strings, files, tensors,
// transforms, added keys and copied files) and one section per rank, each
// section checksummed (xxh3-64), so that a rank can seek straight to its own
// program. The same plan and origin always give the same bytes.
//
// The readers check the container (magic, version, sizes, checksums, every
// index and count) and never trust a count before checking it against the
// bytes that hold it; they do not run the plan verifier (PlanVerifier.h's
// verifyPlan), which callers run as they do after reading the text form.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_BINARYPLAN_H
#define AOA_FORMATS_PLAN_BINARYPLAN_H

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/Plan.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace aoa {
namespace binplan {

/// The first 8 bytes of every binary plan.
inline constexpr char kMagic[8] = {'A', 'O', 'A', 'P', 'L', 'A', 'N', '\0'};
/// The container version this build writes; readers accept
/// [kOldestVersion, kVersion].
constexpr uint32_t kVersion = 3;
constexpr uint32_t kOldestVersion = 3;

/// What a plan was compiled from, recorded in the header: canonical hashes
/// of the source and destination layouts (layoutHash), when known.
struct PlanOrigin {
  std::optional<uint64_t> sourceLayoutHash;
  std::optional<uint64_t> destinationLayoutHash;
  /// Set by the readers (the writer and == ignore it): the checksum the
  /// header records of itself. It covers the directory's checksum, and the
  /// directory every section's, so it names the whole plan's bytes; aoa-run
  /// takes it as the plan's fingerprint without reading every section.
  std::optional<uint64_t> headerChecksum = std::nullopt;
  friend bool operator==(const PlanOrigin &a, const PlanOrigin &b) {
    return a.sourceLayoutHash == b.sourceLayoutHash &&
           a.destinationLayoutHash == b.destinationLayoutHash;
  }
};

/// True when `bytes` start with kMagic (the form to read: binary or text).
bool isBinaryPlan(std::string_view bytes);

/// The binary form of `plan`, its ranks' sections encoded on `threads`
/// threads (the bytes do not depend on how many).
std::string encodeBinaryPlan(const plan::Plan &plan, const PlanOrigin &origin,
                             unsigned threads = 1);
/// Writes encodeBinaryPlan's bytes; false when the stream failed.
bool writeBinaryPlan(const plan::Plan &plan, const PlanOrigin &origin,
                     std::ostream &os, unsigned threads = 1);

/// Decodes a whole binary plan held in memory (read from `path`, which the
/// diagnostics name). nullopt after reporting one error.
std::optional<plan::Plan> readBinaryPlanBytes(const std::string &path,
                                              std::string_view bytes,
                                              DiagnosticEngine &diags,
                                              PlanOrigin *origin = nullptr);

/// Reads the whole binary plan file `path`.
std::optional<plan::Plan> readBinaryPlan(const std::string &path,
                                         DiagnosticEngine &diags,
                                         PlanOrigin *origin = nullptr);

/// What the rank readers do with a rank past the plan's ranks.
enum class AbsentRank {
  /// Report it as an error.
  Refuse,
  /// Return the header and the tables, every program empty: a process that
  /// a job started beyond the plan's ranks still takes part in the job's
  /// checks, which then refuse the job on every process.
  Allow,
};

/// Reads the header, the shared tables and rank `rank`'s section of `path`
/// only (other sections are neither read nor checked): the plan's
/// programs are all empty except rank `rank`'s, and Plan::onlyRank is set.
std::optional<plan::Plan>
readBinaryPlanRank(const std::string &path, uint32_t rank,
                   DiagnosticEngine &diags, PlanOrigin *origin = nullptr,
                   AbsentRank absent = AbsentRank::Refuse);

/// As readBinaryPlanRank, from a whole binary plan held in memory.
std::optional<plan::Plan>
readBinaryPlanRankBytes(const std::string &path, std::string_view bytes,
                        uint32_t rank, DiagnosticEngine &diags,
                        PlanOrigin *origin = nullptr,
                        AbsentRank absent = AbsentRank::Refuse);

} // namespace binplan
} // namespace aoa

#endif // AOA_FORMATS_PLAN_BINARYPLAN_H
