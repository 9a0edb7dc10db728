//===- PlanLineParser.h - One line of the plan's text form ------*- C++ -*-===//
//
// The syntax of a single line (docs/plan-format.md, "Grammar"), independent
// of the lines around it: the reader (PlanReader.cpp) checks order, ids and
// buffer definitions across lines. The parser records where every field of
// the line starts, so a later finding about, say, the third buffer of a send
// can point at it: the reader parses a line again to locate such a field
// rather than keeping the offsets of every line of a large plan.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_PLANLINEPARSER_H
#define AOA_FORMATS_PLAN_LIB_PLANLINEPARSER_H

#include "PlanSite.h"
#include "aoa/ir/Plan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {
namespace plantext {

/// A line's kind is the plan site it defines (PlanSite.h), or Empty.
using LineKind = PlanSite::Kind;

/// Byte offsets, from the start of the line, of the line's fields (those the
/// line has; the others stay 0).
struct LineSites {
  size_t keyword = 0; ///< the first token
  size_t number = 0;  ///< the version, count, id, rank or round number
  size_t rank = 0;    ///< a file's `rank` value
  size_t path = 0;    ///< a file's path, an added key, a copied file, a value
  size_t file = 0;    ///< a tensor's `file` value
  size_t name = 0;
  size_t key = 0;
  size_t type = 0;
  size_t box = 0;
  size_t flat = 0;
  size_t size = 0; ///< a source file's `size` value
  size_t data = 0; ///< a source tensor's `data` range
  size_t tensor = 0; ///< an instruction's tensor id
  size_t region = 0;
  size_t peer = 0;
  std::vector<size_t> operands;
  std::vector<size_t> results;
  std::vector<size_t> resultTypes;
  std::vector<size_t> steps;
};

/// What a line says. Fields that its kind does not use keep stale values
/// (the struct is reused from line to line to avoid allocations).
struct ParsedLine {
  LineKind kind = LineKind::Empty;
  /// Header: the version; Ranks, MemoryBudget: the value; files and tensors:
  /// the id; Rank, Round: the number.
  int64_t number = 0;
  plan::File file;
  plan::StoredTensor tensor;
  std::string addedKey;
  plan::DestinationFormat destinationFormat = plan::DestinationFormat::Aoa;
  plan::SourceAccess sourceAccess = plan::SourceAccess::Owner;
  std::string copiedFile;
  /// Instruction: the buffers it defines are `results` (also in
  /// instruction.buffer or instruction.buffers), declared `resultTypes`.
  plan::Instruction instruction;
  /// Copy: its transform steps (the reader interns them into the plan's
  /// table and sets instruction.transform).
  std::vector<plan::TransformStep> steps;
  std::vector<uint32_t> results;
  std::vector<plan::BufferDecl> resultTypes;
  LineSites sites;
};

struct LineError {
  size_t offset = 0; ///< from the start of the line
  std::string message;
  std::string hint;
};

/// Parses `line` (without its line terminator) into `out`; on a syntax
/// error returns false and describes the first one in `error`.
bool parsePlanLine(std::string_view line, ParsedLine &out, LineError &error);

/// The line keywords and opcodes, for spelling suggestions.
const std::vector<std::string> &planLineWords();

} // namespace plantext
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_PLANLINEPARSER_H
