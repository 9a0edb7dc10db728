//===- PlanChecker.h - The plan verifier's checks, shared state -*- C++ -*-===//
//
// The verifier (PlanVerifier.h) is one checker object whose checks are
// split by concern across files: PlanVerifier.cpp (the order of the checks,
// reporting, plan-wide counts), PlanPathChecks.cpp (file names and paths),
// PlanTensorChecks.cpp (stored tensors, shapes, regions, byte counts),
// PlanRoundChecks.cpp (buffers and the instructions of a round) and
// PlanExchangeChecks.cpp (sends and receives, and their pairing across
// ranks). They share what earlier checks found: which stored tensors are
// usable, and which instruction defines each buffer of the current round.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_PLANCHECKER_H
#define AOA_FORMATS_PLAN_LIB_PLANCHECKER_H

#include "ErrorLimit.h"
#include "PlanSite.h"

#include "aoa/formats/plan/PlanVerifier.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/Plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aoa {
namespace plancheck {

/// `text` in quotes for a message, cut short when long.
std::string quote(std::string_view text);

/// "1 rank", "2 ranks".
std::string plural(size_t n, const char *word);

/// What makes `text` unusable as a name in metadata.json (not UTF-8) or,
/// for a path, in a file system call (a control character: a NUL would
/// cut the path short); empty when it is fine.
std::string unusableText(std::string_view text, bool path);

class PlanChecker {
public:
  /// With `onlyRank`, only that rank's program is checked (verifyPlanRank).
  PlanChecker(const plan::Plan &plan, ErrorLimit &errors,
              const PlanLocator *locator, PlanChecks checks,
              std::optional<uint32_t> onlyRank = std::nullopt)
      : plan_(plan), errors_(errors), locator_(locator), checks_(checks),
        onlyRank_(onlyRank) {}

  /// Runs every check; true when none failed.
  bool run();

private:
  using Kind = PlanSite::Kind;
  using Field = PlanSite::Field;

  //===--- Reporting (PlanVerifier.cpp) ----------------------------------===//

  static PlanSite site(Kind kind, uint32_t index, Field field = Field::Whole) {
    PlanSite s;
    s.kind = kind;
    s.index = index;
    s.field = field;
    return s;
  }
  static PlanSite at(uint32_t rank, uint32_t round, uint32_t instruction,
                     Field field = Field::Whole, uint32_t item = 0) {
    PlanSite s;
    s.kind = Kind::Instruction;
    s.index = rank;
    s.round = round;
    s.instruction = instruction;
    s.field = field;
    s.item = item;
    return s;
  }
  static PlanSite roundSite(uint32_t rank, uint32_t round) {
    PlanSite s = site(Kind::Round, rank);
    s.round = round;
    return s;
  }

  SourceLocation locate(const PlanSite &s) const;
  /// The site in words, for messages without a location.
  std::string context(const PlanSite &s) const;
  InFlightDiagnostic error(const PlanSite &s, const std::string &message);
  /// A note at `s`; without a location the note names the site in words.
  void note(InFlightDiagnostic &diag, const PlanSite &s,
            const std::string &message);

  //===--- Plan-wide counts (PlanVerifier.cpp) ---------------------------===//

  void checkGlobals();
  void checkAddedKeys();
  /// True when every rank has as many rounds as rank 0.
  bool checkRoundCounts();

  //===--- Files and paths (PlanPathChecks.cpp) --------------------------===//

  void checkFiles(bool destination);
  void checkCopiedFiles();
  void checkDestinationPathConflicts();

  //===--- Stored tensors and regions (PlanTensorChecks.cpp) -------------===//

  void checkTensors(bool destination);
  bool checkGeometry(Kind kind, uint32_t i, const plan::StoredTensor &t);
  bool checkDataOffsets(bool destination, uint32_t i,
                        const plan::StoredTensor &t);
  void checkHuggingFaceDestination();
  const plan::File *fileOf(bool destination, const plan::StoredTensor &t);
  const plan::StoredTensor *tensorOf(uint32_t r, uint32_t k, uint32_t i,
                                     bool destination);
  bool checkRegion(uint32_t r, uint32_t k, uint32_t i,
                   const plan::StoredTensor &t, bool destination);

  //===--- Rounds (PlanRoundChecks.cpp) ----------------------------------===//

  void checkRound(uint32_t r, uint32_t k);
  void defineBuffers(uint32_t r, uint32_t k);
  void checkInstructions(uint32_t r, uint32_t k);
  /// Which of `in`'s results buffer `id` is (the n-th of a recv).
  static uint32_t resultItem(const plan::Instruction &in, uint32_t id);
  bool usable(uint32_t r, uint32_t k, uint32_t i, uint32_t id,
              const PlanSite &use);
  void checkRead(uint32_t r, uint32_t k, uint32_t i, const plan::Round &round);
  void checkWrite(uint32_t r, uint32_t k, uint32_t i, const plan::Round &round);
  void checkCopy(uint32_t r, uint32_t k, uint32_t i, const plan::Round &round);

  //===--- Exchanges (PlanExchangeChecks.cpp) ----------------------------===//

  void checkExchangeInstruction(uint32_t r, uint32_t k, uint32_t i,
                                const plan::Round &round);
  void checkExchanges(uint32_t k);
  void reportUnmatched(uint32_t k, bool send,
                       std::pair<uint32_t, uint32_t> link,
                       const std::vector<uint32_t> &list, size_t matched);
  std::optional<std::string> messageTypes(uint32_t r, uint32_t k,
                                          uint32_t i) const;
  void compareMessage(uint32_t k, uint32_t from, uint32_t sendIndex,
                      uint32_t to, uint32_t recvIndex);

  const plan::Plan &plan_;
  ErrorLimit &errors_;
  const PlanLocator *locator_;
  PlanChecks checks_;
  std::optional<uint32_t> onlyRank_;
  /// Per stored tensor: it passed its checks, so instructions may use it.
  std::vector<bool> sourceUsable_, destinationUsable_;

  /// Per buffer of the round being checked: the instruction defining it.
  static constexpr uint32_t kUndefined = UINT32_MAX;
  std::vector<uint32_t> definer_;
  std::vector<bool> declOk_;
};

} // namespace plancheck
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_PLANCHECKER_H
