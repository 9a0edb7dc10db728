//===- PlanLineParser.cpp -------------------------------------------------===//
//
// A hand-written recursive-descent parser over the characters of one line:
// the grammar is small and regular, and a parser that knows which field it
// is reading can say exactly what it expected there. Every syntax error
// carries the line kind's usage as its hint.
//
//===----------------------------------------------------------------------===//
#include "PlanLineParser.h"

#include "aoa/ir/IntegerList.h"

#include "PlanTextSyntax.h"

#include "aoa/ir/Diagnostics.h"

#include <cctype>
#include <limits>

namespace aoa {
namespace plantext {

namespace {

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinInt64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxUInt32 = std::numeric_limits<uint32_t>::max();

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

// ASCII only, without the locale lookups of <cctype> (hot: every token).
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isWordStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isWordChar(char c) { return isWordStart(c) || isDigit(c) || c == '-'; }

std::string quote(std::string_view text) {
  constexpr size_t kMaxShown = 60;
  if (text.size() > kMaxShown)
    return "'" + std::string(text.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(text) + "'";
}

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

class LineParser {
public:
  LineParser(std::string_view line, ParsedLine &out, LineError &error)
      : line_(line), out_(out), error_(error) {}

  bool parse();

private:
  //===--- Characters and tokens -----------------------------------------===//

  void skipSpace() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t'))
      ++pos_;
  }
  bool atEnd() {
    skipSpace();
    return pos_ >= line_.size();
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < line_.size() && line_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c))
      return false;
    ++pos_;
    return true;
  }
  /// The word at the cursor (not consumed); empty when there is none.
  std::string_view peekWord() {
    skipSpace();
    if (pos_ >= line_.size() || !isWordStart(line_[pos_]))
      return {};
    size_t end = pos_ + 1;
    while (end < line_.size() && isWordChar(line_[end]))
      ++end;
    return line_.substr(pos_, end - pos_);
  }

  /// The next token in words, for "expected X, found Y".
  std::string found() {
    skipSpace();
    if (pos_ >= line_.size())
      return "the end of the line";
    char c = line_[pos_];
    if (c == '"')
      return "a string";
    size_t end = pos_;
    if (c == '%' || c == '-')
      ++end;
    while (end < line_.size() && isWordChar(line_[end]))
      ++end;
    if (end == pos_)
      return quote(line_.substr(pos_, 1));
    return quote(line_.substr(pos_, end - pos_));
  }

  bool fail(size_t offset, std::string message) {
    error_.offset = offset;
    error_.message = std::move(message);
    error_.hint = std::string(usage_);
    return false;
  }
  bool expected(std::string_view what) {
    skipSpace();
    return fail(pos_, "expected " + std::string(what) + ", found " + found());
  }
  bool expect(char c, std::string_view what) {
    if (accept(c))
      return true;
    return expected(what);
  }
  /// A field label such as `file` or `box`.
  bool expectWord(std::string_view word) {
    if (peekWord() == word) {
      pos_ += word.size();
      return true;
    }
    return expected("'" + std::string(word) + "'");
  }

  //===--- Values --------------------------------------------------------===//

  bool integer(std::string_view what, int64_t min, int64_t max, int64_t &value,
               size_t *site = nullptr);
  bool id(std::string_view what, uint32_t &value, size_t *site = nullptr) {
    int64_t v = 0;
    if (!integer(what, 0, kMaxUInt32, v, site))
      return false;
    value = static_cast<uint32_t>(v);
    return true;
  }
  bool quoted(std::string_view what, std::string &value,
              size_t *site = nullptr);
  bool type(std::string_view what, DType &dtype, std::vector<int64_t> &shape,
            size_t *site = nullptr);
  bool box(std::string_view what, Box &value, size_t *site = nullptr);
  bool bufferRef(std::string_view what, uint32_t &value,
                 std::vector<size_t> &sites);
  bool step(std::string_view text, size_t at, plan::TransformStep &value);

  //===--- Lines ---------------------------------------------------------===//

  bool numberLine(std::string_view keyword, std::string_view what, int64_t max,
                  LineKind kind, std::string_view usage) {
    usage_ = usage;
    pos_ += keyword.size();
    out_.kind = kind;
    return integer(what, 0, max, out_.number, &out_.sites.number);
  }
  bool fileLine(std::string_view keyword, LineKind kind,
                std::string_view usage);
  bool destinationFormatLine(std::string_view keyword);
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
    in.transform.clear();
  }

  std::string_view line_;
  size_t pos_ = 0;
  ParsedLine &out_;
  LineError &error_;
  std::string_view usage_ = kUsageAny;
};

bool LineParser::integer(std::string_view what, int64_t min, int64_t max,
                         int64_t &value, size_t *site) {
  skipSpace();
  size_t start = pos_;
  if (site)
    *site = start;
  bool negative = pos_ < line_.size() && line_[pos_] == '-' && min < 0;
  size_t digits = pos_ + (negative ? 1 : 0);
  if (digits >= line_.size() || !isDigit(line_[digits]))
    return expected(what);
  size_t end = digits;
  while (end < line_.size() && isDigit(line_[end]))
    ++end;
  if (end < line_.size() && isWordChar(line_[end]))
    return expected(what); // `12ab`: found() shows the whole token
  // Accumulate negatively so that INT64_MIN is representable.
  int64_t v = 0;
  bool overflow = false;
  for (size_t i = digits; i < end && !overflow; ++i)
    overflow = __builtin_mul_overflow(v, 10, &v) ||
               __builtin_sub_overflow(v, line_[i] - '0', &v);
  if (!negative && !overflow)
    overflow = __builtin_mul_overflow(v, -1, &v);
  auto text = [&] { return std::string(line_.substr(start, end - start)); };
  if (overflow)
    return fail(start, std::string(what) + " " + text() +
                           " is out of range (at most " + std::to_string(max) +
                           ")");
  if (v < min)
    return fail(start, std::string(what) + " must be at least " +
                           std::to_string(min) + ", not " + text());
  if (v > max)
    return fail(start, std::string(what) + " must be at most " +
                           std::to_string(max) + ", not " + text());
  pos_ = end;
  value = v;
  return true;
}

/// Appends code point `cp` to `out` in UTF-8.
void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool LineParser::quoted(std::string_view what, std::string &value,
                        size_t *site) {
  skipSpace();
  size_t start = pos_;
  if (site)
    *site = start;
  if (!accept('"'))
    return expected(what);
  value.clear();
  const char *const kEscapeHint =
      "strings are JSON strings: escape '\"' and '\\' with a backslash; "
      "\\n, \\t, \\r, \\b, \\f, \\/ and \\uXXXX are the other escapes";
  // Reads 4 hex digits at pos_.
  auto hex4 = [&](uint32_t &cp) {
    if (pos_ + 4 > line_.size())
      return false;
    cp = 0;
    for (size_t i = 0; i < 4; ++i) {
      char c = line_[pos_ + i];
      if (!std::isxdigit(static_cast<unsigned char>(c)))
        return false;
      cp = cp * 16 + static_cast<uint32_t>(
                         isDigit(c) ? c - '0' : (std::tolower(c) - 'a' + 10));
    }
    pos_ += 4;
    return true;
  };
  while (true) {
    if (pos_ >= line_.size())
      return fail(start, "unterminated string: " + std::string(what) +
                             " has no closing '\"'");
    char c = line_[pos_];
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      fail(pos_, "control character in a string");
      error_.hint = kEscapeHint;
      return false;
    }
    if (c != '\\') {
      value += c;
      ++pos_;
      continue;
    }
    size_t escape = pos_;
    ++pos_;
    char e = pos_ < line_.size() ? line_[pos_] : '\0';
    ++pos_;
    switch (e) {
    case '"':
    case '\\':
    case '/':
      value += e;
      continue;
    case 'n':
      value += '\n';
      continue;
    case 't':
      value += '\t';
      continue;
    case 'r':
      value += '\r';
      continue;
    case 'b':
      value += '\b';
      continue;
    case 'f':
      value += '\f';
      continue;
    case 'u': {
      uint32_t cp = 0;
      bool ok = hex4(cp);
      if (ok && cp >= 0xD800 && cp <= 0xDBFF) {
        // A high surrogate needs its low half: \uD83D\uDE00.
        uint32_t low = 0;
        ok = pos_ + 1 < line_.size() && line_[pos_] == '\\' &&
             line_[pos_ + 1] == 'u' && (pos_ += 2, hex4(low)) &&
             low >= 0xDC00 && low <= 0xDFFF;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      } else if (ok && cp >= 0xDC00 && cp <= 0xDFFF) {
        ok = false;
      }
      if (!ok) {
        fail(escape, "invalid \\u escape in a string");
        error_.hint = kEscapeHint;
        return false;
      }
      appendUtf8(value, cp);
      continue;
    }
    default:
      fail(escape, "invalid escape in a string");
      error_.hint = kEscapeHint;
      return false;
    }
  }
}

bool LineParser::type(std::string_view what, DType &dtype,
                      std::vector<int64_t> &shape, size_t *site) {
  skipSpace();
  size_t start = pos_;
  if (site)
    *site = start;
  std::string_view word = peekWord();
  if (word.empty())
    return expected(what);
  std::optional<DType> parsed = parseDTypeName(word);
  if (!parsed) {
    fail(start, "unknown dtype " + quote(word));
    std::string suggestion = closestSpelling(std::string(word), dtypeNames());
    error_.hint = suggestion.empty() ? "dtypes are " + dtypeList()
                                     : "did you mean '" + suggestion + "'?";
    return false;
  }
  pos_ += word.size();
  dtype = *parsed;
  shape.clear();
  if (!expect('[', "'[' and the shape after the dtype"))
    return false;
  if (accept(']'))
    return true;
  do {
    int64_t extent = 0;
    if (!integer("an extent", 0, kMaxInt64, extent))
      return false;
    shape.push_back(extent);
  } while (accept(','));
  return expect(']', "',' or ']' in the shape");
}

bool LineParser::box(std::string_view what, Box &value, size_t *site) {
  skipSpace();
  if (site)
    *site = pos_;
  if (!accept('['))
    return expected(what);
  llvm::SmallVector<Interval, 4> dims;
  if (!accept(']')) {
    do {
      Interval d;
      if (!integer("the begin of an interval", kMinInt64, kMaxInt64, d.begin) ||
          !expect(':', "':' between the begin and the end of an interval") ||
          !integer("the end of an interval", kMinInt64, kMaxInt64, d.end))
        return false;
      dims.push_back(d);
    } while (accept(','));
    if (!expect(']', "',' or ']' in the box"))
      return false;
  }
  value = Box(dims);
  return true;
}

bool LineParser::bufferRef(std::string_view what, uint32_t &value,
                           std::vector<size_t> &sites) {
  skipSpace();
  sites.push_back(pos_);
  if (pos_ + 1 >= line_.size() || line_[pos_] != '%' ||
      !isDigit(line_[pos_ + 1]))
    return expected(what);
  ++pos_;
  int64_t v = 0;
  if (!integer("a buffer id", 0, kMaxUInt32, v))
    return false;
  value = static_cast<uint32_t>(v);
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
      return fail(at, "invalid permutation step " + quote(text) + ": " + why);
    value.kind = plan::TransformStep::Kind::Permute;
    value.permutation = std::move(*p);
    return true;
  }
  bool reshape = text.substr(0, kReshape.size()) == kReshape;
  if (reshape || text.substr(0, kFlatten.size()) == kFlatten) {
    std::optional<std::vector<int64_t>> canonical =
        parseIntegerList(text.substr(kReshape.size()));
    if (!canonical)
      return fail(
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
  fail(at, "unknown transform step " + quote(text));
  std::string suggestion = closestSpelling(std::string(text), dtypeNames());
  if (!suggestion.empty())
    error_.hint = "did you mean '" + suggestion + "'?";
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
  if (atEnd() || line_[pos_] == '#')
    return true;
  s.keyword = pos_;
  bool ok = false;
  if (line_[pos_] == '%') {
    ok = instructionWithResults();
  } else {
    std::string_view word = peekWord();
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
      usage_ = kUsageAddedKey;
      pos_ += word.size();
      out_.kind = LineKind::AddedKey;
      ok = quoted("the added key as a string", out_.addedKey, &s.path);
    } else if (word == kCopyFile) {
      usage_ = kUsageCopyFile;
      pos_ += word.size();
      out_.kind = LineKind::CopyFile;
      ok = quoted("the copied file's path as a string", out_.copiedFile,
                  &s.path);
    } else if (word == kDestinationFormat) {
      ok = destinationFormatLine(word);
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
      ok = expected("a line keyword or an instruction");
    } else {
      fail(pos_, "unknown line " + quote(word));
      std::string suggestion =
          closestSpelling(std::string(word), planLineWords());
      if (!suggestion.empty())
        error_.hint = "did you mean '" + suggestion + "'?";
    }
  }
  if (!ok)
    return false;
  if (!atEnd()) {
    expected("the end of the line");
    if (line_[pos_] == '#')
      error_.hint = "a '#' comment takes a whole line";
    return false;
  }
  return true;
}

bool LineParser::destinationFormatLine(std::string_view keyword) {
  usage_ = kUsageDestinationFormat;
  pos_ += keyword.size();
  out_.kind = LineKind::DestinationFormat;
  std::string_view value = peekWord();
  out_.sites.path = pos_;
  if (value == kFormatAoa)
    out_.destinationFormat = plan::DestinationFormat::Aoa;
  else if (value == kFormatHuggingFace)
    out_.destinationFormat = plan::DestinationFormat::HuggingFace;
  else if (value.empty())
    return expected("the destination format ('aoa' or 'huggingface')");
  else
    return fail(pos_, "unknown destination format " + quote(value));
  pos_ += value.size();
  return true;
}

bool LineParser::fileLine(std::string_view keyword, LineKind kind,
                          std::string_view usage) {
  usage_ = usage;
  pos_ += keyword.size();
  out_.kind = kind;
  LineSites &s = out_.sites;
  out_.file.size.reset();
  if (!integer("the file id", 0, kMaxUInt32, out_.number, &s.number) ||
      !expectWord(kFieldRank) ||
      !id("the rank that owns the file", out_.file.rank, &s.rank) ||
      !quoted("the file's path as a string", out_.file.path, &s.path))
    return false;
  if (peekWord() == kFieldSize) {
    s.size = pos_;
    pos_ += kFieldSize.size();
    int64_t size = 0;
    if (!integer("the file's size in bytes", 0, kMaxInt64, size))
      return false;
    out_.file.size = uint64_t(size);
  }
  return true;
}

bool LineParser::tensorLine(std::string_view keyword, LineKind kind,
                            std::string_view usage) {
  usage_ = usage;
  pos_ += keyword.size();
  out_.kind = kind;
  LineSites &s = out_.sites;
  plan::StoredTensor &t = out_.tensor;
  if (!integer("the tensor id", 0, kMaxUInt32, out_.number, &s.number) ||
      !expectWord(kFieldFile) || !id("the file id", t.file, &s.file) ||
      !expectWord(kFieldName) ||
      !quoted("the tensor's name in the file as a string", t.name, &s.name) ||
      !expectWord(kFieldKey) ||
      !quoted("the checkpoint key as a string", t.key, &s.key) ||
      !type("the key's dtype and global shape, e.g. 'bfloat16[1024, 512]'",
            t.dtype, t.globalShape, &s.type) ||
      !expectWord(kFieldBox) ||
      !box("the box the tensor holds, e.g. '[0:512, 0:512]'", t.box, &s.box))
    return false;
  t.flat.reset();
  if (peekWord() == kFieldFlat) {
    pos_ += kFieldFlat.size();
    skipSpace();
    s.flat = pos_;
    FlatElementRange range;
    if (!expect('[', "'[' and the flat range, e.g. 'flat [0:4096]'") ||
        !integer("the begin of the flat range", kMinInt64, kMaxInt64,
                 range.begin) ||
        !expect(':', "':' between the begin and the end of the flat range") ||
        !integer("the end of the flat range", kMinInt64, kMaxInt64,
                 range.end) ||
        !expect(']', "']' after the flat range"))
      return false;
    t.flat = range;
  }
  t.data.reset();
  if (peekWord() == kFieldData) {
    s.data = pos_;
    pos_ += kFieldData.size();
    skipSpace();
    int64_t begin = 0, end = 0;
    if (!expect('[', "'[' and the tensor's data offsets, e.g. 'data [0:4096]'") ||
        !integer("the first byte of the tensor's data", 0, kMaxInt64, begin) ||
        !expect(':', "':' between the begin and the end of the data offsets") ||
        !integer("the end of the tensor's data", 0, kMaxInt64, end) ||
        !expect(']', "']' after the data offsets"))
      return false;
    t.data = plan::ByteRange{uint64_t(begin), uint64_t(end)};
  }
  return true;
}

bool LineParser::instructionWithResults() {
  usage_ = kUsageInstruction;
  out_.results.clear();
  out_.resultTypes.clear();
  do {
    uint32_t id = 0;
    if (!bufferRef("a buffer such as '%0'", id, out_.sites.results))
      return false;
    out_.results.push_back(id);
  } while (accept(','));
  if (!expect('=', "'=' after the buffers an instruction defines"))
    return false;
  skipSpace();
  size_t opcodeAt = pos_;
  std::string_view opcode = peekWord();
  if (opcode == "send" || opcode == "write") {
    usage_ = opcode == "send" ? kUsageSend : kUsageWrite;
    return fail(opcodeAt, "'" + std::string(opcode) + "' defines no buffers");
  }
  bool single = opcode == "read" || opcode == "copy";
  if (single && out_.results.size() != 1) {
    usage_ = opcode == "read" ? kUsageRead : kUsageCopy;
    return fail(out_.sites.results[1], "'" + std::string(opcode) +
                                           "' defines one buffer, not " +
                                           std::to_string(out_.results.size()));
  }
  if (opcode == "read")
    return readBody();
  if (opcode == "recv")
    return recvBody();
  if (opcode == "copy")
    return copyBody();
  if (opcode.empty())
    return expected("an opcode (read, recv or copy)");
  fail(opcodeAt, "unknown instruction " + quote(opcode));
  std::string suggestion =
      closestSpelling(std::string(opcode), {"read", "recv", "copy"});
  if (!suggestion.empty())
    error_.hint = "did you mean '" + suggestion + "'?";
  return false;
}

bool LineParser::instructionWithoutResults(std::string_view opcode) {
  size_t at = pos_;
  if (opcode == "send") {
    pos_ += opcode.size();
    return sendBody();
  }
  if (opcode == "write") {
    pos_ += opcode.size();
    return writeBody();
  }
  usage_ = opcode == "read"   ? kUsageRead
           : opcode == "recv" ? kUsageRecv
                              : kUsageCopy;
  return fail(at, "'" + std::string(opcode) +
                      "' defines buffers: name them before '='");
}

bool LineParser::readBody() {
  usage_ = kUsageRead;
  pos_ += 4;
  startInstruction(plan::Opcode::Read);
  plan::Instruction &in = out_.instruction;
  LineSites &s = out_.sites;
  in.buffer = out_.results[0];
  out_.resultTypes.emplace_back();
  plan::BufferDecl &decl = out_.resultTypes.back();
  s.resultTypes.push_back(0);
  return expectWord(kSourceTensorRef) &&
         id("the source tensor id", in.tensor, &s.tensor) &&
         box("the region to read, e.g. '[0:8, 2:4]'", in.region, &s.region) &&
         expect(':', "':' and the buffer's type") &&
         type("the buffer's type, e.g. 'bfloat16[8, 2]'", decl.dtype,
              decl.shape, &s.resultTypes.back());
}

bool LineParser::recvBody() {
  usage_ = kUsageRecv;
  pos_ += 4;
  startInstruction(plan::Opcode::Recv);
  plan::Instruction &in = out_.instruction;
  LineSites &s = out_.sites;
  in.buffers = out_.results;
  if (!id("the rank to receive from", in.peer, &s.peer) ||
      !expect(':', "':' and the types of the buffers received"))
    return false;
  for (size_t i = 0; i < out_.results.size(); ++i) {
    if (i > 0 && !expect(',', "',' and the type of buffer %" +
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
  if (peek(','))
    return fail(pos_, "more types than buffers: recv defines " +
                          std::to_string(out_.results.size()) +
                          (out_.results.size() == 1 ? " buffer" : " buffers"));
  return true;
}

bool LineParser::copyBody() {
  usage_ = kUsageCopy;
  pos_ += 4;
  startInstruction(plan::Opcode::Copy);
  plan::Instruction &in = out_.instruction;
  LineSites &s = out_.sites;
  in.buffer = out_.results[0];
  if (!bufferRef("the input buffer, e.g. '%0'", in.input, s.operands) ||
      !expect('[', "'[' and the transform steps (\"[]\" for none)"))
    return false;
  if (!accept(']')) {
    std::string text;
    do {
      skipSpace();
      size_t at = pos_;
      s.steps.push_back(at);
      if (!quoted("a transform step as a string, e.g. \"[1, 0]\"", text))
        return false;
      in.transform.emplace_back();
      if (!step(text, at, in.transform.back()))
        return false;
    } while (accept(','));
    if (!expect(']', "',' or ']' after a transform step"))
      return false;
  }
  out_.resultTypes.emplace_back();
  s.resultTypes.push_back(0);
  plan::BufferDecl &decl = out_.resultTypes.back();
  return expect(':', "':' and the output buffer's type") &&
         type("the output buffer's type, e.g. 'float32[2, 8]'", decl.dtype,
              decl.shape, &s.resultTypes.back());
}

bool LineParser::sendBody() {
  usage_ = kUsageSend;
  startInstruction(plan::Opcode::Send);
  out_.results.clear();
  out_.resultTypes.clear();
  plan::Instruction &in = out_.instruction;
  if (!id("the rank to send to", in.peer, &out_.sites.peer))
    return false;
  do {
    uint32_t id = 0;
    if (!bufferRef("a buffer to send, e.g. '%0'", id, out_.sites.operands))
      return false;
    in.buffers.push_back(id);
  } while (accept(','));
  return true;
}

bool LineParser::writeBody() {
  usage_ = kUsageWrite;
  startInstruction(plan::Opcode::Write);
  out_.results.clear();
  out_.resultTypes.clear();
  plan::Instruction &in = out_.instruction;
  LineSites &s = out_.sites;
  return expectWord(kDestinationTensorRef) &&
         id("the destination tensor id", in.tensor, &s.tensor) &&
         box("the region to write, e.g. '[0:2, 0:8]'", in.region, &s.region) &&
         bufferRef("the buffer to write, e.g. '%3'", in.buffer, s.operands);
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
