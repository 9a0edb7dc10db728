//===- PlanTextReader.h - The reader of a plan's text form ------*- C++ -*-===//
//
// The state the text reader keeps across lines. PlanReader.cpp holds the entry
// points and the per-line dispatch (order and version checks); the handlers of
// the header, globals, records and rank/round blocks are in PlanTextBlocks.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_PLANTEXTREADER_H
#define AOA_FORMATS_PLAN_LIB_PLANTEXTREADER_H

#include "ErrorLimit.h"
#include "PlanLineParser.h"
#include "TextPlanLocator.h"

#include "aoa/ir/Plan.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {
namespace plantext {

/// The sections of a plan, in the order they must appear.
enum class Section {
  Start,
  Globals,
  SourceFiles,
  DestinationFiles,
  SourceTensors,
  DestinationTensors,
  AddedKeys,
  CopiedFiles,
  Programs,
};

/// What a misplaced line is told.
inline constexpr std::string_view kOrderHint =
    "a plan lists, in this order: 'aoa-plan', 'ranks', 'memory-budget' and "
    "'destination-format', the 'source-file', 'destination-file', "
    "'source-tensor', 'destination-tensor', 'added-key' and 'copy-file' "
    "lines, then a 'rank' block per rank";

/// The line kind as the text spells it, for messages.
std::string_view lineKeyword(LineKind kind);

/// Reads one buffer of plan text into a plan, then verifies it.
class PlanTextReader {
public:
  PlanTextReader(SourceManager &sources, DiagnosticEngine &diags,
                 uint32_t buffer)
      : sources_(sources), buffer_(buffer), errors_(diags),
        text_(sources.text(buffer)) {}

  std::optional<plan::Plan> read();

private:
  SourceLocation locate(size_t offset) const {
    return sources_.locationForOffset(buffer_, offset);
  }
  InFlightDiagnostic error(size_t offset, std::string message) {
    return errors_.error(locate(offset), std::move(message));
  }

  // Line dispatch (PlanReader.cpp).
  /// False when reading cannot go on (no header, another version).
  bool line(size_t start, std::string_view text);
  bool misplaced(size_t start, Section section);
  bool needsNewerVersion(size_t start);
  void store(size_t start);
  void storeFile(size_t start);
  void storeTensor(size_t start);

  // Header, globals, records and rank blocks (PlanTextBlocks.cpp).
  bool header(size_t start);
  void enterSection(Section section, size_t start, LineKind kind);
  void global(size_t start);
  void checkId(size_t start, LineKind kind, size_t count);
  void recover(size_t start, LineKind kind);
  void rank(size_t start);
  void round(size_t start);
  void instruction(size_t start);
  void finishRound();
  void finish(size_t end);

  SourceManager &sources_;
  uint32_t buffer_;
  ErrorLimit errors_;
  std::string_view text_;

  plan::Plan plan_;
  LineTable lines_;
  ParsedLine parsed_;
  /// One string per distinct key and name of the stored tensors.
  SharedStringPool names_;
  LineError lineError_;
  Section section_ = Section::Start;
  /// The first line of the current section, for order diagnostics.
  size_t sectionStart_ = 0;
  LineKind sectionKind_ = LineKind::Empty;
  bool sawHeader_ = false, sawRanks_ = false, sawBudget_ = false;
  bool sawFormat_ = false;
  bool sawAccess_ = false;
  int64_t version_ = plan::kFormatVersion;
  bool reportedMissingGlobals_ = false;
  /// The `ranks` line was read (not only seen): ranks can be checked.
  bool ranksKnown_ = false;
  /// After a bad rank or round line, its instructions are skipped (they
  /// would only produce errors about the wrong round).
  bool skippingBlock_ = false;
  /// A line of the current round did not parse: its buffers are unknown, so
  /// the round's buffer ids are not checked for gaps.
  bool roundBroken_ = false;
  /// Per line kind: how far the ids of its lines are off their count after
  /// a wrong id (see checkId).
  int64_t idShift_[static_cast<size_t>(LineKind::Instruction) + 1] = {};

  /// The current round's definitions: buffer id, declaration, line.
  struct Definition {
    uint32_t id;
    plan::BufferDecl decl;
    size_t line;
    size_t site;
  };
  std::vector<Definition> definitions_;
  plan::Round *round_ = nullptr;
};

} // namespace plantext
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_PLANTEXTREADER_H
