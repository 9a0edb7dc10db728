//===- PlanTextBlocks.cpp - The text reader's handlers per line kind ------===//
//
// What the text reader (PlanTextReader.h) does with a line in its place: the
// header and global lines, checked ids of file and tensor records, placeholders
// after a line that did not parse, and rank and round blocks, whose buffer
// definitions are checked to count %0, %1, ... once the round ends.
//
//===----------------------------------------------------------------------===//
#include "PlanTextReader.h"

#include "PlanTextSyntax.h"

#include <algorithm>

namespace aoa {
namespace plantext {

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
              std::string(lineKeyword(kind)) + "' line")
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
  if (parsed_.kind == LineKind::SourceAccess) {
    if (sawAccess_) {
      error(start + parsed_.sites.keyword,
            "'" + std::string(kSourceAccess) + "' is given twice")
          .note(locate(lines_.sourceAccess), "first given here")
          .hint("give it once");
      return;
    }
    sawAccess_ = true;
    lines_.sourceAccess = start;
    plan_.sourceAccess = parsed_.sourceAccess;
    return;
  }
  bool isRanks = parsed_.kind == LineKind::Ranks;
  bool &seen = isRanks ? sawRanks_ : sawBudget_;
  size_t &where = isRanks ? lines_.ranks : lines_.memoryBudget;
  if (seen) {
    error(start + parsed_.sites.keyword,
          "'" + std::string(lineKeyword(parsed_.kind)) + "' is given twice")
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
  std::string word(lineKeyword(kind));
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
  case LineKind::SourceAccess:
    sawAccess_ = true;
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
  plan::Instruction &in = round_->instructions.emplace_back(parsed_.instruction);
  if (in.opcode == plan::Opcode::Copy)
    in.transform = plan_.transforms.intern(parsed_.steps);
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

} // namespace plantext
} // namespace aoa
