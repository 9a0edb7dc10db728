//===- PlanReader.cpp - Reading a plan's text form ------------------------===//
//
// Lines are parsed one at a time (PlanLineParser.h); the reader checks what
// spans lines: the header, the order of the sections, ids that count from 0,
// rank and round blocks, and the buffers each round defines. It remembers
// where every file, tensor, rank, round and instruction line starts, so the
// verifier's findings can be pointed at the line (and, by parsing that line
// again, at the field) they are about. This file holds the entry points and
// the per-line dispatch (section order, format version); the handlers of each
// kind of line are in PlanTextBlocks.cpp.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanReader.h"

#include "PlanSite.h"
#include "PlanTextReader.h"
#include "PlanTextSyntax.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace aoa {
namespace plantext {

namespace {

Section sectionOf(LineKind kind) {
  switch (kind) {
  case LineKind::Empty:
  case LineKind::Header:
    return Section::Start;
  case LineKind::Ranks:
  case LineKind::MemoryBudget:
  case LineKind::DestinationFormat:
  case LineKind::SourceAccess:
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

} // namespace

std::string_view lineKeyword(LineKind kind) {
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
  case LineKind::SourceAccess:
    return kSourceAccess;
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
  if (misplaced(start, section) || needsNewerVersion(start))
    return true;
  enterSection(section, start, parsed_.kind);
  store(start);
  return true;
}

/// A second header, or a line of a section that has passed: reported, and
/// the line is skipped.
bool PlanTextReader::misplaced(size_t start, Section section) {
  if (parsed_.kind == LineKind::Header) {
    error(start + parsed_.sites.keyword, "the plan header appears twice")
        .note(locate(lines_.header), "the plan starts here")
        .hint("a plan has one 'aoa-plan VERSION' line, its first");
    return true;
  }
  if (section < section_) {
    error(start + parsed_.sites.keyword,
          "'" + std::string(lineKeyword(parsed_.kind)) +
              "' lines must come before the '" +
              std::string(lineKeyword(sectionKind_)) + "' lines")
        .note(locate(sectionStart_),
              "the '" + std::string(lineKeyword(sectionKind_)) +
                  "' lines start here")
        .hint(std::string(kOrderHint));
    return true;
  }
  return false;
}

/// A line or field the plan's format version does not have yet: reported,
/// and the line is skipped.
bool PlanTextReader::needsNewerVersion(size_t start) {
  if (version_ < 2 && (parsed_.kind == LineKind::DestinationFormat ||
                       parsed_.kind == LineKind::CopyFile)) {
    error(start + parsed_.sites.keyword,
          "'" + std::string(lineKeyword(parsed_.kind)) +
              "' lines need plan format version 2, but this plan is version " +
              std::to_string(version_))
        .note(locate(lines_.header), "the version is given here")
        .hint("write 'aoa-plan 2'");
    return true;
  }
  if (version_ >= 3)
    return false;
  if (parsed_.kind == LineKind::SourceAccess) {
    error(start + parsed_.sites.keyword,
          "'" + std::string(kSourceAccess) +
              "' lines need plan format version 3, but this plan is version " +
              std::to_string(version_))
        .note(locate(lines_.header), "the version is given here")
        .hint("write 'aoa-plan 3'");
    return true;
  }
  bool fileLine = parsed_.kind == LineKind::SourceFile ||
                  parsed_.kind == LineKind::DestinationFile;
  bool tensorLine = parsed_.kind == LineKind::SourceTensor ||
                    parsed_.kind == LineKind::DestinationTensor;
  if (!(fileLine && parsed_.file.size) && !(tensorLine && parsed_.tensor.data))
    return false;
  error(start + (fileLine ? parsed_.sites.size : parsed_.sites.data),
        std::string("'") + (fileLine ? "size" : "data") +
            "' needs plan format version 3, but this plan is version " +
            std::to_string(version_))
      .note(locate(lines_.header), "the version is given here")
      .hint("write 'aoa-plan 3'");
  return true;
}

/// Hands a line that is in its place to the handler of its kind.
void PlanTextReader::store(size_t start) {
  switch (parsed_.kind) {
  case LineKind::Empty:
  case LineKind::Header:
    return;
  case LineKind::Ranks:
  case LineKind::MemoryBudget:
  case LineKind::DestinationFormat:
  case LineKind::SourceAccess:
    global(start);
    return;
  case LineKind::SourceFile:
  case LineKind::DestinationFile:
    storeFile(start);
    return;
  case LineKind::SourceTensor:
  case LineKind::DestinationTensor:
    storeTensor(start);
    return;
  case LineKind::AddedKey:
    plan_.addedKeys.push_back(parsed_.addedKey);
    lines_.addedKeys.push_back(start);
    return;
  case LineKind::CopyFile:
    plan_.copiedFiles.push_back(parsed_.copiedFile);
    lines_.copiedFiles.push_back(start);
    return;
  case LineKind::Rank:
    rank(start);
    return;
  case LineKind::Round:
    round(start);
    return;
  case LineKind::Instruction:
    instruction(start);
    return;
  }
}

void PlanTextReader::storeFile(size_t start) {
  bool source = parsed_.kind == LineKind::SourceFile;
  std::vector<plan::File> &files =
      source ? plan_.sourceFiles : plan_.destinationFiles;
  checkId(start, parsed_.kind, files.size());
  files.push_back(parsed_.file);
  (source ? lines_.sourceFiles : lines_.destinationFiles).push_back(start);
}

void PlanTextReader::storeTensor(size_t start) {
  bool source = parsed_.kind == LineKind::SourceTensor;
  std::vector<plan::StoredTensor> &tensors =
      source ? plan_.sourceTensors : plan_.destinationTensors;
  checkId(start, parsed_.kind, tensors.size());
  plan::StoredTensor &t = tensors.emplace_back(parsed_.tensor);
  t.name = names_.intern(t.name);
  t.key = names_.intern(t.key);
  (source ? lines_.sourceTensors : lines_.destinationTensors).push_back(start);
}

} // namespace plantext

std::optional<plan::Plan> readPlanText(const std::string &path,
                                       std::string_view text,
                                       SourceManager &sources,
                                       DiagnosticEngine &diags) {
  uint32_t buffer = sources.addBuffer(path, std::string(text));
  return plantext::PlanTextReader(sources, diags, buffer).read();
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
  return plantext::PlanTextReader(sources, diags, buffer).read();
}

} // namespace aoa
