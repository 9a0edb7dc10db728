//===- PlanVerifier.cpp - The order of the plan checks --------------------===//
//
// The checks run in dependency order: globals, files, stored tensors (each
// remembered as usable or not, so an instruction on a broken tensor adds no
// second error), round counts, then every round of every rank, then the
// exchanges of every round across ranks. No check indexes anything it has
// not bounds-checked, and no arithmetic on plan values can overflow: regions
// are compared with their key's shape before their extents are computed.
// The checks themselves live in one file per concern (PlanChecker.h); this
// file holds their order, the reporting and the plan-wide counts.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanVerifier.h"

#include "PlanChecker.h"
#include "PlanCoverage.h"
#include "PlanTextSyntax.h"

#include "aoa/ir/ShardMetadata.h"

#include <unordered_map>

namespace aoa {
namespace plancheck {

std::string quote(std::string_view text) {
  constexpr size_t kMaxShown = 120;
  if (text.size() > kMaxShown)
    return "'" + std::string(text.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(text) + "'";
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

bool PlanChecker::run() {
  unsigned before = errors_.count();
  checkGlobals();
  checkFiles(false);
  checkFiles(true);
  checkTensors(false);
  checkTensors(true);
  checkAddedKeys();
  checkCopiedFiles();
  checkDestinationPathConflicts();
  checkHuggingFaceDestination();
  if (checks_ == PlanChecks::Tables)
    return errors_.count() == before && !errors_.stopped();
  if (onlyRank_) {
    if (*onlyRank_ < plan_.programs.size())
      for (uint32_t k = 0; k < plan_.programs[*onlyRank_].rounds.size() &&
                           !errors_.stopped();
           ++k)
        checkRound(*onlyRank_, k);
  } else {
    bool sameRounds = checkRoundCounts();
    for (uint32_t r = 0; r < plan_.programs.size() && !errors_.stopped(); ++r)
      for (uint32_t k = 0;
           k < plan_.programs[r].rounds.size() && !errors_.stopped(); ++k)
        checkRound(r, k);
    if (sameRounds && plan_.programs.size() == plan_.ranks &&
        !plan_.programs.empty())
      for (uint32_t k = 0;
           k < plan_.programs[0].rounds.size() && !errors_.stopped(); ++k)
        checkExchanges(k);
  }
  // Coverage is a property of the whole plan, checked once every part of
  // it is known to be well-formed.
  if (errors_.count() == before && !errors_.stopped())
    checkPlanCoverage(
        plan_,
        [&](CoverageFinding finding) {
          auto diag = error(finding.site, finding.message);
          if (finding.noteSite)
            note(diag, *finding.noteSite, finding.note);
          diag.hint(finding.hint);
          return !errors_.stopped();
        },
        onlyRank_);
  return errors_.count() == before && !errors_.stopped();
}

//===--- Reporting --------------------------------------------------------===//

SourceLocation PlanChecker::locate(const PlanSite &s) const {
  return locator_ ? locator_->locate(s) : SourceLocation{};
}

std::string PlanChecker::context(const PlanSite &s) const {
  switch (s.kind) {
  case Kind::Empty:
  case Kind::Header:
  case Kind::Ranks:
  case Kind::MemoryBudget:
    return "";
  case Kind::SourceFile:
    return "source file " + std::to_string(s.index) + ": ";
  case Kind::DestinationFile:
    return "destination file " + std::to_string(s.index) + ": ";
  case Kind::SourceTensor:
    return "source tensor " + std::to_string(s.index) + ": ";
  case Kind::DestinationTensor:
    return "destination tensor " + std::to_string(s.index) + ": ";
  case Kind::AddedKey:
    return "added key " + std::to_string(s.index) + ": ";
  case Kind::CopyFile:
    return "copied file " + std::to_string(s.index) + ": ";
  case Kind::DestinationFormat:
  case Kind::SourceAccess:
    return "";
  case Kind::Rank:
    return "rank " + std::to_string(s.index) + ": ";
  case Kind::Round:
    return "rank " + std::to_string(s.index) + ", round " +
           std::to_string(s.round) + ": ";
  case Kind::Instruction: {
    std::string opcode = "?";
    if (s.index < plan_.programs.size() &&
        s.round < plan_.programs[s.index].rounds.size() &&
        s.instruction <
            plan_.programs[s.index].rounds[s.round].instructions.size())
      opcode = std::string(plantext::opcodeName(plan_.programs[s.index]
                                                    .rounds[s.round]
                                                    .instructions[s.instruction]
                                                    .opcode));
    return "rank " + std::to_string(s.index) + ", round " +
           std::to_string(s.round) + ", instruction " +
           std::to_string(s.instruction) + " (" + opcode + "): ";
  }
  }
  return "";
}

InFlightDiagnostic PlanChecker::error(const PlanSite &s,
                                      const std::string &message) {
  SourceLocation location = locate(s);
  return errors_.error(location,
                       location.isValid() ? message : context(s) + message);
}

void PlanChecker::note(InFlightDiagnostic &diag, const PlanSite &s,
                       const std::string &message) {
  SourceLocation location = locate(s);
  diag.note(location, location.isValid() ? message : context(s) + message);
}

//===--- Plan-wide counts -------------------------------------------------===//

void PlanChecker::checkGlobals() {
  if (plan_.ranks == 0)
    error(site(Kind::Ranks, 0), "a plan needs at least one rank")
        .hint("write 'ranks COUNT' with the number of processes that run "
              "the plan");
  if (int64_t(plan_.ranks) > kRankLimit)
    error(site(Kind::Ranks, 0), "a plan of " + std::to_string(plan_.ranks) +
                                    " ranks is more than the " +
                                    std::to_string(kRankLimit) +
                                    " aoa supports")
        .hint("ranks are integers from 0 to " + std::to_string(kRankLimit - 1));
  if (plan_.memoryBudget < 0)
    error(site(Kind::MemoryBudget, 0), "the memory budget " +
                                           std::to_string(plan_.memoryBudget) +
                                           " is negative")
        .hint("give the bytes a rank may hold in buffers, or 0 for no budget");
  if (plan_.programs.size() != plan_.ranks)
    error(site(Kind::Ranks, 0),
          "the plan has " + plural(plan_.ranks, "rank") + " but " +
              plural(plan_.programs.size(), "rank program"))
        .hint("give every rank a program (a rank with nothing to do has "
              "empty rounds)");
}

void PlanChecker::checkAddedKeys() {
  std::unordered_map<std::string_view, uint32_t> seen;
  for (uint32_t i = 0; i < plan_.addedKeys.size() && !errors_.stopped(); ++i) {
    auto [it, inserted] = seen.emplace(plan_.addedKeys[i], i);
    if (inserted)
      continue;
    auto diag =
        error(site(Kind::AddedKey, i),
              "added key " + quote(plan_.addedKeys[i]) + " is listed twice");
    note(diag, site(Kind::AddedKey, it->second), "first listed here");
    diag.hint("list each added key once");
  }
}

bool PlanChecker::checkRoundCounts() {
  bool same = true;
  for (uint32_t r = 1; r < plan_.programs.size() && !errors_.stopped(); ++r) {
    size_t have = plan_.programs[r].rounds.size();
    size_t want = plan_.programs[0].rounds.size();
    if (have == want)
      continue;
    same = false;
    auto diag =
        error(site(Kind::Rank, r),
              "rank " + std::to_string(r) + " has " + plural(have, "round") +
                  ", but rank 0 has " + std::to_string(want));
    note(diag, site(Kind::Rank, 0), "rank 0 starts here");
    diag.hint("every rank runs the same rounds; a rank with nothing to do "
              "in a round has an empty 'round N'");
  }
  return same;
}

} // namespace plancheck

bool verifyPlanWith(const plan::Plan &plan, ErrorLimit &errors,
                    const PlanLocator *locator) {
  return plancheck::PlanChecker(plan, errors, locator, PlanChecks::All).run();
}

bool verifyPlan(const plan::Plan &plan, DiagnosticEngine &diags,
                PlanChecks checks) {
  ErrorLimit errors(diags);
  return plancheck::PlanChecker(plan, errors, nullptr, checks).run();
}

bool verifyPlanRank(const plan::Plan &plan, uint32_t rank,
                    DiagnosticEngine &diags) {
  ErrorLimit errors(diags);
  return plancheck::PlanChecker(plan, errors, nullptr, PlanChecks::All, rank)
      .run();
}

} // namespace aoa
