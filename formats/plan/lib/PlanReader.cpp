//===- PlanReader.cpp
//------------------------------------------------------===//
//
// Lines are parsed one at a time (PlanLineParser.h); this file checks what
// spans lines: the header, the order of the sections, ids that count from 0,
// rank and round blocks, and the buffers each round defines. It remembers
// where every file, tensor, rank, round and instruction line starts, so the
// verifier's findings can be pointed at the line (and, by parsing that line
// again, at the field) they are about.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanReader.h"

#include "ErrorLimit.h"
#include "PlanLineParser.h"
#include "PlanSite.h"
#include "PlanTextSyntax.h"
#include "TextPlanLocator.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace aoa {

namespace {

using namespace plantext;

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

constexpr std::string_view kOrderHint =
    "a plan lists, in this order: 'aoa-plan', 'ranks', 'memory-budget' and "
    "'destination-format', the 'source-file', 'destination-file', "
    "'source-tensor', 'destination-tensor', 'added-key' and 'copy-file' "
    "lines, then a 'rank' block per rank";

Section sectionOf(LineKind kind) {
  switch (kind) {
  case LineKind::Empty:
  case LineKind::Header:
    return Section::Start;
  case LineKind::Ranks:
  case LineKind::MemoryBudget:
  case LineKind::DestinationFormat:
    return Section::Globals;
  case LineKind::SourceFile:
    return Section::SourceFiles;
  case LineKind::DestinationFile:
    return Section::DestinationFiles;
  case LineKind::SourceTensor:
    return Section::SourceTensors;
  case LineKind::DestinationTensor:
    return Section::DestinationTensors;
  case LineKind::AddedKey:
    return Section::AddedKeys;
  case LineKind::CopyFile:
    return Section::CopiedFiles;
  case LineKind::Rank:
  case LineKind::Round:
  case LineKind::Instruction:
    return Section::Programs;
  }
  return Section::Start;
}

/// The line kind as the text spells it, for messages.
std::string_view spelling(LineKind kind) {
  switch (kind) {
  case LineKind::Header:
    return kHeader;
  case LineKind::Ranks:
    return kRanks;
  case LineKind::MemoryBudget:
    return kMemoryBudget;
  case LineKind::SourceFile:
    return kSourceFile;
  case LineKind::DestinationFile:
    return kDestinationFile;
  case LineKind::SourceTensor:
    return kSourceTensor;
  case LineKind::DestinationTensor:
    return kDestinationTensor;
  case LineKind::AddedKey:
    return kAddedKey;
  case LineKind::DestinationFormat:
    return kDestinationFormat;
  case LineKind::CopyFile:
    return kCopyFile;
  case LineKind::Rank:
    return kRank;
  case LineKind::Round:
    return kRound;
  case LineKind::Instruction:
    return "instruction";
  case LineKind::Empty:
    break;
  }
  return "";
}

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

  /// False when reading cannot go on (no header, another version).
  bool line(size_t start, std::string_view text);
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
  LineError lineError_;
  Section section_ = Section::Start;
  /// The first line of the current section, for order diagnostics.
  size_t sectionStart_ = 0;
  LineKind sectionKind_ = LineKind::Empty;
  bool sawHeader_ = false, sawRanks_ = false, sawBudget_ = false;
  bool sawFormat_ = false;
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

std::optional<plan::Plan> PlanTextReader::read() {
  size_t start = 0;
  while (start < text_.size() && !errors_.stopped()) {
    size_t end = text_.find('\n', start);
    size_t next = end == std::string_view::npos ? text_.size() : end + 1;
    std::string_view text = lineAt(text_, start);
    if (!line(start, text))
      return std::nullopt;
    start = next;
  }
  if (errors_.stopped())
    return std::nullopt;
  finish(text_.size());
  if (errors_.count() != 0)
    return std::nullopt;
  TextPlanLocator locator(sources_, buffer_, lines_);
  if (!verifyPlanWith(plan_, errors_, &locator))
    return std::nullopt;
  return std::move(plan_);
}

bool PlanTextReader::line(size_t start, std::string_view text) {
  if (!parsePlanLine(text, parsed_, lineError_)) {
    error(start + lineError_.offset, lineError_.message).hint(lineError_.hint);
    if (!sawHeader_)
      return false; // not a plan, or not one this reader understands
    recover(start, parsed_.kind);
    return true;
  }
  if (parsed_.kind == LineKind::Empty)
    return true;
  if (!sawHeader_)
    return header(start);

  Section section = sectionOf(parsed_.kind);
  if (parsed_.kind == LineKind::Header) {
    error(start + parsed_.sites.keyword, "the plan header appears twice")
        .note(locate(lines_.header), "the plan starts here")
        .hint("a plan has one 'aoa-plan VERSION' line, its first");
    return true;
  }
  if (section < section_) {
    error(start + parsed_.sites.keyword,
          "'" + std::string(spelling(parsed_.kind)) +
              "' lines must come before the '" +
              std::string(spelling(sectionKind_)) + "' lines")
        .note(locate(sectionStart_), "the '" +
                                         std::string(spelling(sectionKind_)) +
                                         "' lines start here")
        .hint(std::string(kOrderHint));
    return true;
  }
  if (version_ < 2 && (parsed_.kind == LineKind::DestinationFormat ||
                        parsed_.kind == LineKind::CopyFile)) {
    error(start + parsed_.sites.keyword,
          "'" + std::string(spelling(parsed_.kind)) +
              "' lines need plan format version 2, but this plan is version " +
              std::to_string(version_))
        .note(locate(lines_.header), "the version is given here")
        .hint("write 'aoa-plan 2'");
    return true;
  }
  if (version_ < 3) {
    bool fileLine = parsed_.kind == LineKind::SourceFile ||
                    parsed_.kind == LineKind::DestinationFile;
    bool tensorLine = parsed_.kind == LineKind::SourceTensor ||
                      parsed_.kind == LineKind::DestinationTensor;
    if ((fileLine && parsed_.file.size) || (tensorLine && parsed_.tensor.data)) {
      error(start + (fileLine ? parsed_.sites.size : parsed_.sites.data),
            std::string("'") + (fileLine ? "size" : "data") +
                "' needs plan format version 3, but this plan is version " +
                std::to_string(version_))
          .note(locate(lines_.header), "the version is given here")
          .hint("write 'aoa-plan 3'");
      return true;
    }
  }
  enterSection(section, start, parsed_.kind);

  switch (parsed_.kind) {
  case LineKind::Empty:
  case LineKind::Header:
    return true;
  case LineKind::Ranks:
  case LineKind::MemoryBudget:
  case LineKind::DestinationFormat:
    global(start);
    return true;
  case LineKind::SourceFile:
  case LineKind::DestinationFile: {
    bool source = parsed_.kind == LineKind::SourceFile;
    std::vector<plan::File> &files =
        source ? plan_.sourceFiles : plan_.destinationFiles;
    checkId(start, parsed_.kind, files.size());
    files.push_back(parsed_.file);
    (source ? lines_.sourceFiles : lines_.destinationFiles).push_back(start);
    return true;
  }
  case LineKind::SourceTensor:
  case LineKind::DestinationTensor: {
    bool source = parsed_.kind == LineKind::SourceTensor;
    std::vector<plan::StoredTensor> &tensors =
        source ? plan_.sourceTensors : plan_.destinationTensors;
    checkId(start, parsed_.kind, tensors.size());
    tensors.push_back(parsed_.tensor);
    (source ? lines_.sourceTensors : lines_.destinationTensors)
        .push_back(start);
    return true;
  }
  case LineKind::AddedKey:
    plan_.addedKeys.push_back(parsed_.addedKey);
    lines_.addedKeys.push_back(start);
    return true;
  case LineKind::CopyFile:
    plan_.copiedFiles.push_back(parsed_.copiedFile);
    lines_.copiedFiles.push_back(start);
    return true;
  case LineKind::Rank:
    rank(start);
    return true;
  case LineKind::Round:
    round(start);
    return true;
  case LineKind::Instruction:
    instruction(start);
    return true;
  }
  return true;
}

bool PlanTextReader::header(size_t start) {
  size_t at = start + parsed_.sites.keyword;
  if (parsed_.kind != LineKind::Header) {
    error(at, "expected the plan header '" + std::string(kHeader) + " " +
                  std::to_string(plan::kFormatVersion) + "'")
        .hint("a plan starts with 'aoa-plan VERSION'; write one with "
              "aoa-compile -o PLAN");
    return false;
  }
  if (parsed_.number < plan::kOldestFormatVersion ||
      parsed_.number > plan::kFormatVersion) {
    error(start + parsed_.sites.number,
          "unsupported plan format version " + std::to_string(parsed_.number) +
              "; this reader supports versions " +
              std::to_string(plan::kOldestFormatVersion) + " to " +
              std::to_string(plan::kFormatVersion))
        .hint("compile the plan again with the aoa-compile that belongs to "
              "this aoa-run, or run it with a matching aoa-run");
    return false;
  }
  sawHeader_ = true;
  version_ = parsed_.number;
  lines_.header = start;
  sectionStart_ = start;
  sectionKind_ = LineKind::Header;
  return true;
}

void PlanTextReader::enterSection(Section section, size_t start,
                                  LineKind kind) {
  if (section > Section::Globals && !reportedMissingGlobals_ &&
      (!sawRanks_ || !sawBudget_)) {
    reportedMissingGlobals_ = true;
    std::string missing = !sawRanks_ ? "ranks COUNT" : "memory-budget BYTES";
    error(start + parsed_.sites.keyword,
          "missing '" + missing + "' line before the first '" +
              std::string(spelling(kind)) + "' line")
        .hint(std::string(kOrderHint));
  }
  if (section != section_) {
    section_ = section;
    sectionStart_ = start;
    sectionKind_ = kind;
  }
}

void PlanTextReader::global(size_t start) {
  if (parsed_.kind == LineKind::DestinationFormat) {
    if (sawFormat_) {
      error(start + parsed_.sites.keyword,
            "'" + std::string(kDestinationFormat) + "' is given twice")
          .note(locate(lines_.destinationFormat), "first given here")
          .hint("give it once");
      return;
    }
    sawFormat_ = true;
    lines_.destinationFormat = start;
    plan_.destinationFormat = parsed_.destinationFormat;
    return;
  }
  bool isRanks = parsed_.kind == LineKind::Ranks;
  bool &seen = isRanks ? sawRanks_ : sawBudget_;
  size_t &where = isRanks ? lines_.ranks : lines_.memoryBudget;
  if (seen) {
    error(start + parsed_.sites.keyword,
          "'" + std::string(spelling(parsed_.kind)) + "' is given twice")
        .note(locate(where), "first given here")
        .hint("give it once");
    return;
  }
  seen = true;
  where = start;
  if (isRanks) {
    plan_.ranks = static_cast<uint32_t>(parsed_.number);
    ranksKnown_ = true;
  } else
    plan_.memoryBudget = parsed_.number;
}

void PlanTextReader::checkId(size_t start, LineKind kind, size_t count) {
  int64_t &shift = idShift_[static_cast<size_t>(kind)];
  int64_t expected = static_cast<int64_t>(count) + shift;
  if (parsed_.number == expected)
    return;
  std::string word(spelling(kind));
  error(start + parsed_.sites.number,
        "expected '" + word + " " + std::to_string(expected) + "', found '" +
            word + " " + std::to_string(parsed_.number) + "'")
      .hint("the " + word +
            " ids count 0, 1, 2, ... in the order of the lines");
  // Expect the next id after this one, so one missing line is one error.
  shift = parsed_.number - static_cast<int64_t>(count);
}

void PlanTextReader::recover(size_t start, LineKind kind) {
  roundBroken_ = true;
  switch (kind) {
  case LineKind::Ranks:
    sawRanks_ = true; // not also "missing"
    break;
  case LineKind::MemoryBudget:
    sawBudget_ = true;
    break;
  // A placeholder keeps the ids of the following lines in step.
  case LineKind::SourceFile:
    plan_.sourceFiles.emplace_back();
    lines_.sourceFiles.push_back(start);
    break;
  case LineKind::DestinationFile:
    plan_.destinationFiles.emplace_back();
    lines_.destinationFiles.push_back(start);
    break;
  case LineKind::SourceTensor:
    plan_.sourceTensors.emplace_back();
    lines_.sourceTensors.push_back(start);
    break;
  case LineKind::DestinationTensor:
    plan_.destinationTensors.emplace_back();
    lines_.destinationTensors.push_back(start);
    break;
  case LineKind::Rank:
    finishRound();
    plan_.programs.emplace_back();
    lines_.rankBlocks.push_back(start);
    lines_.rounds.emplace_back();
    skippingBlock_ = true;
    break;
  case LineKind::Round:
    finishRound();
    if (!plan_.programs.empty()) {
      plan_.programs.back().rounds.emplace_back();
      lines_.rounds.back().push_back({start});
    }
    skippingBlock_ = true;
    break;
  case LineKind::DestinationFormat:
    sawFormat_ = true;
    break;
  case LineKind::Empty:
  case LineKind::Header:
  case LineKind::AddedKey:
  case LineKind::CopyFile:
  case LineKind::Instruction:
    break;
  }
}

void PlanTextReader::rank(size_t start) {
  finishRound();
  skippingBlock_ = false;
  size_t expected = plan_.programs.size();
  size_t at = start + parsed_.sites.number;
  // The block is kept even when its number is wrong, so the rank lines
  // after it are checked against their own positions.
  if (ranksKnown_ && expected >= plan_.ranks) {
    error(at, "rank " + std::to_string(parsed_.number) +
                  " is out of range: the plan has " +
                  std::to_string(plan_.ranks) +
                  (plan_.ranks == 1 ? " rank" : " ranks"))
        .note(locate(lines_.ranks), "the number of ranks is given here")
        .hint("ranks count from 0 to ranks - 1");
  } else if (static_cast<size_t>(parsed_.number) != expected) {
    error(at, "expected 'rank " + std::to_string(expected) + "', found 'rank " +
                  std::to_string(parsed_.number) + "'")
        .hint("give one block per rank, in order: 'rank 0', 'rank 1', ...");
  }
  plan_.programs.emplace_back();
  lines_.rankBlocks.push_back(start);
  lines_.rounds.emplace_back();
}

void PlanTextReader::round(size_t start) {
  finishRound();
  skippingBlock_ = false;
  if (plan_.programs.empty()) {
    error(start + parsed_.sites.keyword, "'round' outside a rank block")
        .hint("start the rank's program with 'rank RANK'");
    skippingBlock_ = true;
    return;
  }
  plan::RankProgram &program = plan_.programs.back();
  size_t expected = program.rounds.size();
  if (static_cast<size_t>(parsed_.number) != expected) {
    error(start + parsed_.sites.number,
          "expected 'round " + std::to_string(expected) + "', found 'round " +
              std::to_string(parsed_.number) + "'")
        .hint("the rounds of a rank count 0, 1, 2, ... in order; an empty "
              "round is a 'round N' line without instructions");
    skippingBlock_ = true;
  }
  program.rounds.emplace_back();
  lines_.rounds.back().push_back({start});
  if (!skippingBlock_)
    round_ = &program.rounds.back();
}

void PlanTextReader::instruction(size_t start) {
  if (skippingBlock_)
    return;
  if (!round_) {
    error(start + parsed_.sites.keyword, "instruction outside a round")
        .hint("instructions belong to a round: write 'rank RANK' and "
              "'round NUMBER' lines before them");
    skippingBlock_ = true;
    return;
  }
  for (size_t i = 0; i < parsed_.results.size(); ++i)
    definitions_.push_back({parsed_.results[i], parsed_.resultTypes[i], start,
                            parsed_.sites.results[i]});
  round_->instructions.push_back(parsed_.instruction);
  lines_.rounds.back().back().push_back(start);
}

void PlanTextReader::finishRound() {
  if (!round_)
    return;
  // Ids must be 0..n-1, each defined once. Sorting finds both duplicates
  // (neighbours, in line order) and gaps; definitions usually come in id
  // order, so the sort is cheap.
  std::stable_sort(
      definitions_.begin(), definitions_.end(),
      [](const Definition &a, const Definition &b) { return a.id < b.id; });
  round_->buffers.reserve(definitions_.size());
  uint32_t next = 0;
  for (size_t i = 0; i < definitions_.size(); ++i) {
    const Definition &d = definitions_[i];
    if (i > 0 && d.id == definitions_[i - 1].id) {
      const Definition &first = definitions_[i - 1];
      error(d.line + d.site, "buffer %" + std::to_string(d.id) +
                                 " is defined twice in this round")
          .note(locate(first.line + first.site), "first defined here")
          .hint("every read, recv and copy defines new buffers; give this "
                "one the next free id");
      continue;
    }
    if (d.id != next && !roundBroken_) {
      error(d.line + d.site, "buffer %" + std::to_string(d.id) +
                                 " is defined, but %" + std::to_string(next) +
                                 " is not")
          .hint("the buffers of a round are numbered %0, %1, %2, ... without "
                "gaps");
      roundBroken_ = true; // one gap message per round
    }
    round_->buffers.push_back(d.decl);
    ++next;
  }
  definitions_.clear();
  round_ = nullptr;
  roundBroken_ = false;
}

void PlanTextReader::finish(size_t end) {
  finishRound();
  if (!sawHeader_) {
    error(0, "empty plan: expected the header '" + std::string(kHeader) + " " +
                 std::to_string(plan::kFormatVersion) + "'")
        .hint("a plan starts with 'aoa-plan VERSION'; write one with "
              "aoa-compile -o PLAN");
    return;
  }
  if (!reportedMissingGlobals_ && (!sawRanks_ || !sawBudget_)) {
    error(end, std::string("missing '") +
                   (!sawRanks_ ? "ranks COUNT" : "memory-budget BYTES") +
                   "' line")
        .hint(std::string(kOrderHint));
    return;
  }
  if (ranksKnown_ && plan_.programs.size() < plan_.ranks) {
    size_t have = plan_.programs.size();
    error(lines_.ranks,
          "the plan has " + std::to_string(plan_.ranks) + " ranks but " +
              (have == 0
                   ? std::string("no rank blocks")
                   : "rank blocks for only 0 to " + std::to_string(have - 1)))
        .hint("add the blocks 'rank " + std::to_string(have) + "' to 'rank " +
              std::to_string(plan_.ranks - 1) +
              "'; a rank with nothing to do still lists its empty rounds");
  }
}

} // namespace

std::optional<plan::Plan> readPlanText(const std::string &path,
                                       std::string_view text,
                                       SourceManager &sources,
                                       DiagnosticEngine &diags) {
  uint32_t buffer = sources.addBuffer(path, std::string(text));
  return PlanTextReader(sources, diags, buffer).read();
}

std::optional<plan::Plan> readPlanFile(const std::string &path,
                                       SourceManager &sources,
                                       DiagnosticEngine &diags) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    diags
        .error(SourceLocation{},
               "cannot read plan '" + path + "': it is a directory")
        .hint("pass the path of a plan written by aoa-compile -o PLAN");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int saved = errno;
    diags
        .error(SourceLocation{},
               "cannot read plan '" + path + "': " + std::strerror(saved))
        .hint("pass the path of a plan written by aoa-compile -o PLAN");
    return std::nullopt;
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) {
    diags.error(SourceLocation{}, "cannot read plan '" + path + "'")
        .hint("pass the path of a plan written by aoa-compile -o PLAN");
    return std::nullopt;
  }
  uint32_t buffer = sources.addBuffer(path, contents.str());
  return PlanTextReader(sources, diags, buffer).read();
}

} // namespace aoa
