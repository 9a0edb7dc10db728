//===- PlanLineParser.cpp - The grammar of one plan line ------------------===//
// Over 500 lines: one grammar, whose productions share one parser's state.
//
// A hand-written recursive-descent parser over the tokens of one line
// (PlanLineScanner.h): the grammar is small and regular, and a parser that
// knows which field it is reading can say exactly what it expected there.
// Every syntax error carries the line kind's usage as its hint.
//
//===----------------------------------------------------------------------===//
#include "PlanLineParser.h"

#include "PlanLineScanner.h"
#include "PlanTextSyntax.h"

#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/IntegerList.h"

namespace aoa {
namespace plantext {

namespace {

// What each kind of line looks like; the hint of every syntax error.
constexpr std::string_view kUsageAny =
    "a plan line is a keyword line (aoa-plan, ranks, memory-budget, "
    "destination-format, source-file, destination-file, source-tensor, "
    "destination-tensor, added-key, copy-file, rank, round), an instruction, "
    "a '#' comment or blank";
constexpr std::string_view kUsageHeader =
    "the first line of a plan is 'aoa-plan VERSION', e.g. 'aoa-plan 3'";
constexpr std::string_view kUsageRanks = "write 'ranks COUNT', e.g. 'ranks 8'";
constexpr std::string_view kUsageBudget =
    "write 'memory-budget BYTES' (0: no budget), e.g. 'memory-budget "
    "1073741824'";
constexpr std::string_view kUsageSourceFile =
    "write 'source-file ID rank RANK \"PATH\"', optionally followed by "
    "'size BYTES'";
constexpr std::string_view kUsageDestinationFile =
    "write 'destination-file ID rank RANK \"PATH\"'";
constexpr std::string_view kUsageSourceTensor =
    "write 'source-tensor ID file FILE name \"NAME\" key \"KEY\" "
    "DTYPE[SHAPE] box [B0:E0, ...]', optionally followed by 'flat [A:B]' "
    "and 'data [BEGIN:END]'";
constexpr std::string_view kUsageDestinationTensor =
    "write 'destination-tensor ID file FILE name \"NAME\" key \"KEY\" "
    "DTYPE[SHAPE] box [B0:E0, ...]', optionally followed by 'flat [A:B]'";
constexpr std::string_view kUsageAddedKey = "write 'added-key \"KEY\"'";
constexpr std::string_view kUsageDestinationFormat =
    "write 'destination-format aoa' or 'destination-format huggingface'";
constexpr std::string_view kUsageSourceAccess =
    "write 'source-access shared' (any rank may read any source file) or "
    "'source-access owner'";
constexpr std::string_view kUsageCopyFile = "write 'copy-file \"PATH\"'";
constexpr std::string_view kUsageRank = "write 'rank RANK', e.g. 'rank 0'";
constexpr std::string_view kUsageRound = "write 'round NUMBER', e.g. 'round 0'";
constexpr std::string_view kUsageInstruction =
    "an instruction is '%N = read src TENSOR [REGION] : TYPE', 'send PEER "
    "%A, %B', '%A, %B = recv PEER : TYPE, TYPE', '%N = copy %IN [\"STEP\", "
    "...] : TYPE' or 'write dst TENSOR [REGION] %N'";
constexpr std::string_view kUsageRead =
    "write '%N = read src TENSOR [B0:E0, ...] : DTYPE[SHAPE]'";
constexpr std::string_view kUsageSend = "write 'send PEER %A, %B, ...'";
constexpr std::string_view kUsageRecv =
    "write '%A, %B, ... = recv PEER : DTYPE[SHAPE], DTYPE[SHAPE], ...', one "
    "type per buffer";
constexpr std::string_view kUsageCopy =
    "write '%N = copy %IN [\"STEP\", ...] : DTYPE[SHAPE]'; a step is a "
    "permutation \"[1, 0]\", a dtype \"float32\", \"reshape:[C0, C1, ...]\" "
    "or \"flatten:[C0, C1, ...]\"";
constexpr std::string_view kUsageWrite =
    "write 'write dst TENSOR [B0:E0, ...] %N'";

std::vector<std::string> dtypeNames() {
  std::vector<std::string> names;
  for (DType dtype : kAllDTypes)
    names.emplace_back(dtypeName(dtype));
  return names;
}

std::string dtypeList() {
  std::string out;
  for (const std::string &name : dtypeNames())
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

/// What one line means, read from the scanner's tokens into a ParsedLine.
class LineParser {
public:
  LineParser(std::string_view line, ParsedLine &out, LineError &error)
      : scan_(line, error), out_(out) {
    scan_.setUsage(kUsageAny);
  }

  bool parse();

private:
  //===--- Values --------------------------------------------------------===//

  bool type(std::string_view what, DType &dtype, std::vector<int64_t> &shape,
            size_t *site) {
    llvm::SmallVector<int64_t, 4> parsed;
    if (!type(what, dtype, parsed, site))
      return false;
    shape.assign(parsed.begin(), parsed.end());
    return true;
  }
  /// A stored tensor's shape: the one already in `shape` (shared with the
  /// tensors parsed before, which copied it) when the text is the same.
  bool type(std::string_view what, DType &dtype, SharedShape &shape,
            size_t *site) {
    llvm::SmallVector<int64_t, 4> parsed;
    if (!type(what, dtype, parsed, site))
      return false;
    if (shape != parsed)
      shape = SharedShape(parsed);
    return true;
  }
  bool type(std::string_view what, DType &dtype,
            llvm::SmallVectorImpl<int64_t> &shape,
            size_t *site = nullptr);
  bool box(std::string_view what, Box &value, size_t *site = nullptr);
  bool step(std::string_view text, size_t at, plan::TransformStep &value);

  //===--- Lines ---------------------------------------------------------===//

  bool numberLine(std::string_view keyword, std::string_view what, int64_t max,
                  LineKind kind, std::string_view usage) {
    scan_.setUsage(usage);
    scan_.skip(keyword.size());
    out_.kind = kind;
    return scan_.integer(what, 0, max, out_.number, &out_.sites.number);
  }
  bool fileLine(std::string_view keyword, LineKind kind,
                std::string_view usage);
  bool destinationFormatLine(std::string_view keyword);
  bool sourceAccessLine(std::string_view keyword);
  bool tensorLine(std::string_view keyword, LineKind kind,
                  std::string_view usage);
  bool instructionWithResults();
  bool instructionWithoutResults(std::string_view opcode);
  bool readBody();
  bool recvBody();
  bool copyBody();
  bool sendBody();
  bool writeBody();
  void startInstruction(plan::Opcode opcode) {
    out_.kind = LineKind::Instruction;
    plan::Instruction &in = out_.instruction;
    in.opcode = opcode;
    in.buffer = in.input = in.tensor = in.peer = 0;
    in.region = Box();
    in.buffers.clear();
    in.transform = 0;
    out_.steps.clear();
  }

  LineScanner scan_;
  ParsedLine &out_;
  /// A tensor's name and key as read (the tensor holds shared strings).
  std::string name_, key_;
};

bool LineParser::type(std::string_view what, DType &dtype,
                      llvm::SmallVectorImpl<int64_t> &shape, size_t *site) {
  scan_.skipSpace();
  size_t start = scan_.position();
  if (site)
    *site = start;
  std::string_view word = scan_.peekWord();
  if (word.empty())
    return scan_.expected(what);
  std::optional<DType> parsed = parseDTypeName(word);
  if (!parsed) {
    scan_.fail(start, "unknown dtype " + quote(word));
    std::string suggestion = closestSpelling(std::string(word), dtypeNames());
    scan_.setHint(suggestion.empty() ? "dtypes are " + dtypeList()
                                     : "did you mean '" + suggestion + "'?");
    return false;
  }
  scan_.skip(word.size());
  dtype = *parsed;
  shape.clear();
  if (!scan_.expect('[', "'[' and the shape after the dtype"))
    return false;
  if (scan_.accept(']'))
    return true;
  do {
    int64_t extent = 0;
    if (!scan_.integer("an extent", 0, kMaxInt64, extent))
      return false;
    shape.push_back(extent);
  } while (scan_.accept(','));
  return scan_.expect(']', "',' or ']' in the shape");
}

bool LineParser::box(std::string_view what, Box &value, size_t *site) {
  scan_.skipSpace();
  if (site)
    *site = scan_.position();
  if (!scan_.accept('['))
    return scan_.expected(what);
  llvm::SmallVector<Interval, 4> dims;
  if (!scan_.accept(']')) {
    do {
      Interval d;
      if (!scan_.integer("the begin of an interval", kMinInt64, kMaxInt64,
                         d.begin) ||
          !scan_.expect(':',
                        "':' between the begin and the end of an interval") ||
          !scan_.integer("the end of an interval", kMinInt64, kMaxInt64, d.end))
        return false;
      dims.push_back(d);
    } while (scan_.accept(','));
    if (!scan_.expect(']', "',' or ']' in the box"))
      return false;
  }
  value = Box(dims);
  return true;
}

bool LineParser::step(std::string_view text, size_t at,
                      plan::TransformStep &value) {
  constexpr std::string_view kReshape = "reshape:";
  constexpr std::string_view kFlatten = "flatten:";
  if (!text.empty() && text.front() == '[') {
    std::string why = "expected a list of axes such as \"[1, 0]\"";
    std::optional<Permutation> p;
    if (std::optional<std::vector<int64_t>> axes = parseIntegerList(text))
      p = Permutation::fromAxes(*axes, axes->size(), &why);
    if (!p)
      return scan_.fail(at,
                        "invalid permutation step " + quote(text) + ": " + why);
    value.kind = plan::TransformStep::Kind::Permute;
    value.permutation = std::move(*p);
    return true;
  }
  bool reshape = text.substr(0, kReshape.size()) == kReshape;
  if (reshape || text.substr(0, kFlatten.size()) == kFlatten) {
    std::optional<std::vector<int64_t>> canonical =
        parseIntegerList(text.substr(kReshape.size()));
    if (!canonical)
      return scan_.fail(
          at, "invalid " + std::string(reshape ? "reshape" : "flatten") +
                  " step " + quote(text) +
                  ": expected a canonical shape such as '" +
                  std::string(reshape ? kReshape : kFlatten) + "[4, 2, 3]'");
    value.kind = reshape ? plan::TransformStep::Kind::Reshape
                         : plan::TransformStep::Kind::Flatten;
    value.canonical = std::move(*canonical);
    return true;
  }
  if (std::optional<DType> dtype = parseDTypeName(text)) {
    value.kind = plan::TransformStep::Kind::Cast;
    value.dtype = *dtype;
    return true;
  }
  scan_.fail(at, "unknown transform step " + quote(text));
  std::string suggestion = closestSpelling(std::string(text), dtypeNames());
  if (!suggestion.empty())
    scan_.setHint("did you mean '" + suggestion + "'?");
  return false;
}

//===----------------------------------------------------------------------===//
// Lines
//===----------------------------------------------------------------------===//

bool LineParser::parse() {
  out_.kind = LineKind::Empty;
  LineSites &s = out_.sites;
  s.operands.clear();
  s.results.clear();
  s.resultTypes.clear();
  s.steps.clear();
  if (scan_.atEnd() || scan_.peek('#'))
    return true;
  s.keyword = scan_.position();
  bool ok = false;
  if (scan_.peek('%')) {
    ok = instructionWithResults();
  } else {
    std::string_view word = scan_.peekWord();
    if (word == kHeader)
      ok = numberLine(word, "the format version", kMaxUInt32, LineKind::Header,
                      kUsageHeader);
    else if (word == kRanks)
      ok = numberLine(word, "the number of ranks", kRankLimit, LineKind::Ranks,
                      kUsageRanks);
    else if (word == kMemoryBudget)
      ok = numberLine(word, "the memory budget in bytes", kMaxInt64,
                      LineKind::MemoryBudget, kUsageBudget);
    else if (word == kSourceFile)
      ok = fileLine(word, LineKind::SourceFile, kUsageSourceFile);
    else if (word == kDestinationFile)
      ok = fileLine(word, LineKind::DestinationFile, kUsageDestinationFile);
    else if (word == kSourceTensor)
      ok = tensorLine(word, LineKind::SourceTensor, kUsageSourceTensor);
    else if (word == kDestinationTensor)
      ok = tensorLine(word, LineKind::DestinationTensor,
                      kUsageDestinationTensor);
    else if (word == kAddedKey) {
      scan_.setUsage(kUsageAddedKey);
      scan_.skip(word.size());
      out_.kind = LineKind::AddedKey;
      ok = scan_.quoted("the added key as a string", out_.addedKey, &s.path);
    } else if (word == kCopyFile) {
      scan_.setUsage(kUsageCopyFile);
      scan_.skip(word.size());
      out_.kind = LineKind::CopyFile;
      ok = scan_.quoted("the copied file's path as a string", out_.copiedFile,
                        &s.path);
    } else if (word == kDestinationFormat) {
      ok = destinationFormatLine(word);
    } else if (word == kSourceAccess) {
      ok = sourceAccessLine(word);
    } else if (word == kRank)
      ok = numberLine(word, "the rank", kMaxUInt32, LineKind::Rank, kUsageRank);
    else if (word == kRound)
      ok = numberLine(word, "the round number", kMaxUInt32, LineKind::Round,
                      kUsageRound);
    else if (!word.empty() &&
             (word == "send" || word == "write" || word == "read" ||
              word == "recv" || word == "copy"))
      ok = instructionWithoutResults(word);
    else if (word.empty()) {
      ok = scan_.expected("a line keyword or an instruction");
    } else {
      scan_.fail(scan_.position(), "unknown line " + quote(word));
      std::string suggestion =
          closestSpelling(std::string(word), planLineWords());
      if (!suggestion.empty())
        scan_.setHint("did you mean '" + suggestion + "'?");
    }
  }
  if (!ok)
    return false;
  if (!scan_.atEnd()) {
    scan_.expected("the end of the line");
    if (scan_.peek('#'))
      scan_.setHint("a '#' comment takes a whole line");
    return false;
  }
  return true;
}

bool LineParser::sourceAccessLine(std::string_view keyword) {
  scan_.setUsage(kUsageSourceAccess);
  scan_.skip(keyword.size());
  out_.kind = LineKind::SourceAccess;
  std::string_view value = scan_.peekWord();
  out_.sites.path = scan_.position();
  if (value == kAccessOwner)
    out_.sourceAccess = plan::SourceAccess::Owner;
  else if (value == kAccessShared)
    out_.sourceAccess = plan::SourceAccess::Shared;
  else if (value.empty())
    return scan_.expected("the source access ('shared' or 'owner')");
  else
    return scan_.fail(scan_.position(),
                      "unknown source access " + quote(value));
  scan_.skip(value.size());
  return true;
}

bool LineParser::destinationFormatLine(std::string_view keyword) {
  scan_.setUsage(kUsageDestinationFormat);
  scan_.skip(keyword.size());
  out_.kind = LineKind::DestinationFormat;
  std::string_view value = scan_.peekWord();
  out_.sites.path = scan_.position();
  if (value == kFormatAoa)
    out_.destinationFormat = plan::DestinationFormat::Aoa;
  else if (value == kFormatHuggingFace)
    out_.destinationFormat = plan::DestinationFormat::HuggingFace;
  else if (value.empty())
    return scan_.expected("the destination format ('aoa' or 'huggingface')");
  else
    return scan_.fail(scan_.position(),
                      "unknown destination format " + quote(value));
  scan_.skip(value.size());
  return true;
}

bool LineParser::fileLine(std::string_view keyword, LineKind kind,
                          std::string_view usage) {
  scan_.setUsage(usage);
  scan_.skip(keyword.size());
  out_.kind = kind;
  LineSites &s = out_.sites;
  out_.file.size.reset();
  if (!scan_.integer("the file id", 0, kMaxUInt32, out_.number, &s.number) ||
      !scan_.expectWord(kFieldRank) ||
      !scan_.id("the rank that owns the file", out_.file.rank, &s.rank) ||
      !scan_.quoted("the file's path as a string", out_.file.path, &s.path))
    return false;
  if (scan_.peekWord() == kFieldSize) {
    s.size = scan_.position();
    scan_.skip(kFieldSize.size());
    int64_t size = 0;
    if (!scan_.integer("the file's size in bytes", 0, kMaxInt64, size))
      return false;
    out_.file.size = uint64_t(size);
  }
  return true;
}

bool LineParser::tensorLine(std::string_view keyword, LineKind kind,
                            std::string_view usage) {
  scan_.setUsage(usage);
  scan_.skip(keyword.size());
  out_.kind = kind;
  LineSites &s = out_.sites;
  plan::StoredTensor &t = out_.tensor;
  if (!scan_.integer("the tensor id", 0, kMaxUInt32, out_.number, &s.number) ||
      !scan_.expectWord(kFieldFile) ||
      !scan_.id("the file id", t.file, &s.file) ||
      !scan_.expectWord(kFieldName) ||
      !scan_.quoted("the tensor's name in the file as a string", name_,
                    &s.name) ||
      !scan_.expectWord(kFieldKey) ||
      !scan_.quoted("the checkpoint key as a string", key_, &s.key) ||
      !type("the key's dtype and global shape, e.g. 'bfloat16[1024, 512]'",
            t.dtype, t.globalShape, &s.type) ||
      !scan_.expectWord(kFieldBox) ||
      !box("the box the tensor holds, e.g. '[0:512, 0:512]'", t.box, &s.box))
    return false;
  t.name = std::move(name_);
  t.key = std::move(key_);
  t.flat.reset();
  if (scan_.peekWord() == kFieldFlat) {
    scan_.skip(kFieldFlat.size());
    scan_.skipSpace();
    s.flat = scan_.position();
    FlatElementRange range;
    if (!scan_.expect('[', "'[' and the flat range, e.g. 'flat [0:4096]'") ||
        // (Not the least int64: it stands for none in memory, PackedNone.)
        !scan_.integer("the begin of the flat range", kMinInt64 + 1,
                       kMaxInt64, range.begin) ||
        !scan_.expect(':',
                      "':' between the begin and the end of the flat range") ||
        !scan_.integer("the end of the flat range", kMinInt64, kMaxInt64,
                       range.end) ||
        !scan_.expect(']', "']' after the flat range"))
      return false;
    t.flat = range;
  }
  t.data.reset();
  if (scan_.peekWord() == kFieldData) {
    s.data = scan_.position();
    scan_.skip(kFieldData.size());
    scan_.skipSpace();
    int64_t begin = 0, end = 0;
    if (!scan_.expect(
            '[', "'[' and the tensor's data offsets, e.g. 'data [0:4096]'") ||
        !scan_.integer("the first byte of the tensor's data", 0, kMaxInt64,
                       begin) ||
        !scan_.expect(
            ':', "':' between the begin and the end of the data offsets") ||
        !scan_.integer("the end of the tensor's data", 0, kMaxInt64, end) ||
        !scan_.expect(']', "']' after the data offsets"))
      return false;
    t.data = plan::ByteRange{uint64_t(begin), uint64_t(end)};
  }
  return true;
}

bool LineParser::instructionWithResults() {
  scan_.setUsage(kUsageInstruction);
  out_.results.clear();
  out_.resultTypes.clear();
  do {
    uint32_t id = 0;
    if (!scan_.bufferRef("a buffer such as '%0'", id, out_.sites.results))
      return false;
    out_.results.push_back(id);
  } while (scan_.accept(','));
  if (!scan_.expect('=', "'=' after the buffers an instruction defines"))
    return false;
  scan_.skipSpace();
  size_t opcodeAt = scan_.position();
  std::string_view opcode = scan_.peekWord();
  if (opcode == "send" || opcode == "write") {
    scan_.setUsage(opcode == "send" ? kUsageSend : kUsageWrite);
    return scan_.fail(opcodeAt,
                      "'" + std::string(opcode) + "' defines no buffers");
  }
  bool single = opcode == "read" || opcode == "copy";
  if (single && out_.results.size() != 1) {
    scan_.setUsage(opcode == "read" ? kUsageRead : kUsageCopy);
    return scan_.fail(out_.sites.results[1],
                      "'" + std::string(opcode) + "' defines one buffer, not " +
                          std::to_string(out_.results.size()));
  }
  if (opcode == "read")
    return readBody();
  if (opcode == "recv")
    return recvBody();
  if (opcode == "copy")
    return copyBody();
  if (opcode.empty())
    return scan_.expected("an opcode (read, recv or copy)");
  scan_.fail(opcodeAt, "unknown instruction " + quote(opcode));
  std::string suggestion =
      closestSpelling(std::string(opcode),
                      std::vector<std::string_view>{"read", "recv", "copy"});
  if (!suggestion.empty())
    scan_.setHint("did you mean '" + suggestion + "'?");
  return false;
}

bool LineParser::instructionWithoutResults(std::string_view opcode) {
  size_t at = scan_.position();
  if (opcode == "send") {
    scan_.skip(opcode.size());
    return sendBody();
  }
  if (opcode == "write") {
    scan_.skip(opcode.size());
    return writeBody();
  }
  scan_.setUsage(opcode == "read"   ? kUsageRead
                 : opcode == "recv" ? kUsageRecv
                                    : kUsageCopy);
  return scan_.fail(at, "'" + std::string(opcode) +
                            "' defines buffers: name them before '='");
}

bool LineParser::readBody() {
  scan_.setUsage(kUsageRead);
  scan_.skip(4);
  startInstruction(plan::Opcode::Read);
  plan::Instruction &in = out_.instruction;
  LineSites &s = out_.sites;
  in.buffer = out_.results[0];
  out_.resultTypes.emplace_back();
  plan::BufferDecl &decl = out_.resultTypes.back();
  s.resultTypes.push_back(0);
  return scan_.expectWord(kSourceTensorRef) &&
         scan_.id("the source tensor id", in.tensor, &s.tensor) &&
         box("the region to read, e.g. '[0:8, 2:4]'", in.region, &s.region) &&
         scan_.expect(':', "':' and the buffer's type") &&
         type("the buffer's type, e.g. 'bfloat16[8, 2]'", decl.dtype,
              decl.shape, &s.resultTypes.back());
}

bool LineParser::recvBody() {
  scan_.setUsage(kUsageRecv);
  scan_.skip(4);
  startInstruction(plan::Opcode::Recv);
  plan::Instruction &in = out_.instruction;
  LineSites &s = out_.sites;
  in.buffers.assign(out_.results.begin(), out_.results.end());
  if (!scan_.id("the rank to receive from", in.peer, &s.peer) ||
      !scan_.expect(':', "':' and the types of the buffers received"))
    return false;
  for (size_t i = 0; i < out_.results.size(); ++i) {
    if (i > 0 && !scan_.expect(',', "',' and the type of buffer %" +
                                        std::to_string(out_.results[i]) +
                                        " (one type per buffer received)"))
      return false;
    out_.resultTypes.emplace_back();
    s.resultTypes.push_back(0);
    plan::BufferDecl &decl = out_.resultTypes.back();
    if (!type("the type of buffer %" + std::to_string(out_.results[i]) +
                  ", e.g. 'bfloat16[8, 2]'",
              decl.dtype, decl.shape, &s.resultTypes.back()))
      return false;
  }
  if (scan_.peek(','))
    return scan_.fail(scan_.position(),
                      "more types than buffers: recv defines " +
                          std::to_string(out_.results.size()) +
                          (out_.results.size() == 1 ? " buffer" : " buffers"));
  return true;
}

bool LineParser::copyBody() {
  scan_.setUsage(kUsageCopy);
  scan_.skip(4);
  startInstruction(plan::Opcode::Copy);
  plan::Instruction &in = out_.instruction;
  LineSites &s = out_.sites;
  in.buffer = out_.results[0];
  if (!scan_.bufferRef("the input buffer, e.g. '%0'", in.input, s.operands) ||
      !scan_.expect('[', "'[' and the transform steps (\"[]\" for none)"))
    return false;
  if (!scan_.accept(']')) {
    std::string text;
    do {
      scan_.skipSpace();
      size_t at = scan_.position();
      s.steps.push_back(at);
      if (!scan_.quoted("a transform step as a string, e.g. \"[1, 0]\"", text))
        return false;
      out_.steps.emplace_back();
      if (!step(text, at, out_.steps.back()))
        return false;
    } while (scan_.accept(','));
    if (!scan_.expect(']', "',' or ']' after a transform step"))
      return false;
  }
  out_.resultTypes.emplace_back();
  s.resultTypes.push_back(0);
  plan::BufferDecl &decl = out_.resultTypes.back();
  return scan_.expect(':', "':' and the output buffer's type") &&
         type("the output buffer's type, e.g. 'float32[2, 8]'", decl.dtype,
              decl.shape, &s.resultTypes.back());
}

bool LineParser::sendBody() {
  scan_.setUsage(kUsageSend);
  startInstruction(plan::Opcode::Send);
  out_.results.clear();
  out_.resultTypes.clear();
  plan::Instruction &in = out_.instruction;
  if (!scan_.id("the rank to send to", in.peer, &out_.sites.peer))
    return false;
  do {
    uint32_t id = 0;
    if (!scan_.bufferRef("a buffer to send, e.g. '%0'", id,
                         out_.sites.operands))
      return false;
    in.buffers.push_back(id);
  } while (scan_.accept(','));
  return true;
}

bool LineParser::writeBody() {
  scan_.setUsage(kUsageWrite);
  startInstruction(plan::Opcode::Write);
  out_.results.clear();
  out_.resultTypes.clear();
  plan::Instruction &in = out_.instruction;
  LineSites &s = out_.sites;
  return scan_.expectWord(kDestinationTensorRef) &&
         scan_.id("the destination tensor id", in.tensor, &s.tensor) &&
         box("the region to write, e.g. '[0:2, 0:8]'", in.region, &s.region) &&
         scan_.bufferRef("the buffer to write, e.g. '%3'", in.buffer,
                         s.operands);
}

} // namespace

bool parsePlanLine(std::string_view line, ParsedLine &out, LineError &error) {
  return LineParser(line, out, error).parse();
}

const std::vector<std::string> &planLineWords() {
  static const std::vector<std::string> kWords = {
      std::string(kHeader),
      std::string(kRanks),
      std::string(kMemoryBudget),
      std::string(kDestinationFormat),
      std::string(kSourceAccess),
      std::string(kSourceFile),
      std::string(kDestinationFile),
      std::string(kSourceTensor),
      std::string(kDestinationTensor),
      std::string(kAddedKey),
      std::string(kCopyFile),
      std::string(kRank),
      std::string(kRound),
      "read",
      "send",
      "recv",
      "copy",
      "write"};
  return kWords;
}

} // namespace plantext
} // namespace aoa