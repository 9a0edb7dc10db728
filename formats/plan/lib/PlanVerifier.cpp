//===- PlanVerifier.cpp
//----------------------------------------------------===//
//
// The checks run in dependency order: globals, files, stored tensors (each
// remembered as usable or not, so an instruction on a broken tensor adds no
// second error), round counts, then every round of every rank, then the
// exchanges of every round across ranks. No check indexes anything it has
// not bounds-checked, and no arithmetic on plan values can overflow: regions
// are compared with their key's shape before their extents are computed.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanVerifier.h"

#include "PlanCoverage.h"
#include "PlanSite.h"
#include "PlanTextSyntax.h"
#include "TransformTypes.h"

#include "aoa/formats/plan/MessagePairing.h"
#include "aoa/ir/ShardMetadata.h"
#include "aoa/ir/Utf8.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>

namespace aoa {

namespace {

using plan::Opcode;
using Kind = PlanSite::Kind;
using Field = PlanSite::Field;

std::string quote(std::string_view text) {
  constexpr size_t kMaxShown = 120;
  if (text.size() > kMaxShown)
    return "'" + std::string(text.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(text) + "'";
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

/// Reads, then the exchange, then copies, then writes.
int phaseOf(Opcode opcode) {
  switch (opcode) {
  case Opcode::Read:
    return 0;
  case Opcode::Send:
  case Opcode::Recv:
    return 1;
  case Opcode::Copy:
    return 2;
  case Opcode::Write:
    return 3;
  }
  return 0;
}

constexpr const char *kPhaseHint =
    "a round reads, then sends and receives, then copies, then writes; "
    "order its instructions that way (or move this one to another round)";

class PlanChecker {
public:
  PlanChecker(const plan::Plan &plan, ErrorLimit &errors,
              const PlanLocator *locator)
      : plan_(plan), errors_(errors), locator_(locator) {}

  bool run() {
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
    // Coverage is a property of the whole plan, checked once every part of
    // it is known to be well-formed.
    if (errors_.count() == before && !errors_.stopped())
      checkPlanCoverage(plan_, [&](CoverageFinding finding) {
        auto diag = error(finding.site, finding.message);
        if (finding.noteSite)
          note(diag, *finding.noteSite, finding.note);
        diag.hint(finding.hint);
        return !errors_.stopped();
      });
    return errors_.count() == before && !errors_.stopped();
  }

private:
  //===--- Reporting -----------------------------------------------------===//

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

  SourceLocation locate(const PlanSite &s) const {
    return locator_ ? locator_->locate(s) : SourceLocation{};
  }

  /// The site in words, for messages without a location.
  std::string context(const PlanSite &s) const {
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
        opcode =
            std::string(plantext::opcodeName(plan_.programs[s.index]
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

  InFlightDiagnostic error(const PlanSite &s, const std::string &message) {
    SourceLocation location = locate(s);
    return errors_.error(location,
                         location.isValid() ? message : context(s) + message);
  }
  /// A note at `s`; without a location the note names the site in words.
  void note(InFlightDiagnostic &diag, const PlanSite &s,
            const std::string &message) {
    SourceLocation location = locate(s);
    diag.note(location, location.isValid() ? message : context(s) + message);
  }

  //===--- Globals, files, tensors ---------------------------------------===//

  void checkGlobals() {
    if (plan_.ranks == 0)
      error(site(Kind::Ranks, 0), "a plan needs at least one rank")
          .hint("write 'ranks COUNT' with the number of processes that run "
                "the plan");
    if (int64_t(plan_.ranks) > kRankLimit)
      error(site(Kind::Ranks, 0),
            "a plan of " + std::to_string(plan_.ranks) +
                " ranks is more than the " + std::to_string(kRankLimit) +
                " aoa supports")
          .hint("ranks are integers from 0 to " +
                std::to_string(kRankLimit - 1));
    if (plan_.memoryBudget < 0)
      error(site(Kind::MemoryBudget, 0),
            "the memory budget " + std::to_string(plan_.memoryBudget) +
                " is negative")
          .hint(
              "give the bytes a rank may hold in buffers, or 0 for no budget");
    if (plan_.programs.size() != plan_.ranks)
      error(site(Kind::Ranks, 0),
            "the plan has " + plural(plan_.ranks, "rank") + " but " +
                plural(plan_.programs.size(), "rank program"))
          .hint("give every rank a program (a rank with nothing to do has "
                "empty rounds)");
  }

  void checkFiles(bool destination) {
    const std::vector<plan::File> &files =
        destination ? plan_.destinationFiles : plan_.sourceFiles;
    Kind kind = destination ? Kind::DestinationFile : Kind::SourceFile;
    const char *side = destination ? "destination" : "source";
    std::unordered_map<std::string, uint32_t> byPath;
    for (uint32_t i = 0; i < files.size() && !errors_.stopped(); ++i) {
      const plan::File &f = files[i];
      if (f.rank >= plan_.ranks)
        error(site(kind, i, Field::Rank),
              std::string(side) + " file " + quote(f.path) +
                  " belongs to rank " + std::to_string(f.rank) +
                  ", but the plan has " + plural(plan_.ranks, "rank"))
            .hint("ranks count from 0 to ranks - 1");
      if (f.path.empty()) {
        error(site(kind, i, Field::Path), std::string(side) + " file " +
                                              std::to_string(i) +
                                              " has an empty path")
            .hint("give the file's path relative to the " + std::string(side) +
                  " directory");
        continue;
      }
      if (std::string why = unusableText(f.path, true); !why.empty())
        error(site(kind, i, Field::Path),
              std::string(side) + " file " + quote(f.path) + " " + why)
            .hint("file paths are UTF-8 without control characters");
      else if (escapesDirectory(f.path))
        error(site(kind, i, Field::Path),
              std::string(side) + " file " + quote(f.path) +
                  " is not inside the " + side + " directory")
            .hint(std::string(side) +
                  " paths are relative and have no '..' components (a "
                  "source file may be a symbolic link that points "
                  "elsewhere; its name may not)");
      else if (destination && isReservedName(f.path))
        error(site(kind, i, Field::Path),
              "destination file " + quote(f.path) +
                  " has a name that aoa-run uses for its own files")
            .hint("metadata.json, model.safetensors.index.json, .aoa-run/, "
                  ".aoa/ and temporary names (.NAME.tmp.*) are reserved");
      if (destination && f.size)
        error(site(kind, i, Field::Size),
              "destination file " + quote(f.path) +
                  " records a size; only source files do")
            .hint("a source file's size is what aoa-run expects to find; "
                  "remove 'size' from destination files");
      // `a//b` and `./a/b` name the file `a/b` too.
      auto [it, inserted] = byPath.emplace(lexicallyNormal(f.path), i);
      if (!inserted) {
        auto diag = error(site(kind, i, Field::Path),
                          std::string(side) + " file " + quote(f.path) +
                              " is listed twice");
        note(diag, site(kind, it->second, Field::Path), "first listed here");
        diag.hint("list each file once and refer to it by its id");
      }
    }
  }

  /// What makes `text` unusable as a name in metadata.json (not UTF-8) or,
  /// for a path, in a file system call (a control character: a NUL would
  /// cut the path short); empty when it is fine.
  static std::string unusableText(std::string_view text, bool path) {
    if (!isValidUtf8(text))
      return "is not valid UTF-8";
    if (path)
      for (char c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char code[8];
          std::snprintf(code, sizeof code, "0x%02x",
                        unsigned(static_cast<unsigned char>(c)));
          return std::string("contains the control character ") + code;
        }
    return "";
  }

  /// `path` with empty and `.` components dropped (`a//./b` is `a/b`).
  static std::string lexicallyNormal(std::string_view path) {
    std::string normal;
    if (!path.empty() && path.front() == '/')
      normal = "/";
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find('/', start);
      if (end == std::string_view::npos)
        end = path.size();
      std::string_view part = path.substr(start, end - start);
      if (!part.empty() && part != ".") {
        if (!normal.empty() && normal.back() != '/')
          normal += '/';
        normal += part;
      }
      start = end + 1;
    }
    return normal;
  }

  /// Names of the files aoa-run writes or stages itself.
  static bool isReservedName(std::string_view path) {
    std::string normal = lexicallyNormal(path);
    std::string_view name = normal;
    size_t slash = name.rfind('/');
    std::string_view last =
        slash == std::string_view::npos ? name : name.substr(slash + 1);
    auto under = [&](std::string_view directory) {
      return name == directory ||
             (name.size() > directory.size() &&
              name.substr(0, directory.size()) == directory &&
              name[directory.size()] == '/');
    };
    return name == "metadata.json" || name == plan::kHuggingFaceIndexName ||
           under(".aoa-run") || under(".aoa") ||
           (last.size() > 1 && last[0] == '.' &&
            last.find(".tmp.") != std::string_view::npos);
  }

  static bool escapesDirectory(std::string_view path) {
    if (path.front() == '/')
      return true;
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find('/', start);
      if (end == std::string_view::npos)
        end = path.size();
      if (path.substr(start, end - start) == "..")
        return true;
      start = end + 1;
    }
    return false;
  }

  void checkTensors(bool destination) {
    const std::vector<plan::StoredTensor> &tensors =
        destination ? plan_.destinationTensors : plan_.sourceTensors;
    const std::vector<plan::File> &files =
        destination ? plan_.destinationFiles : plan_.sourceFiles;
    std::vector<bool> &usable =
        destination ? destinationUsable_ : sourceUsable_;
    Kind kind = destination ? Kind::DestinationTensor : Kind::SourceTensor;
    const char *side = destination ? "destination" : "source";
    usable.assign(tensors.size(), false);
    // (file, name) -> tensor: a file cannot hold two tensors of one name.
    std::map<std::pair<uint32_t, std::string_view>, uint32_t> byName;
    for (uint32_t i = 0; i < tensors.size() && !errors_.stopped(); ++i) {
      const plan::StoredTensor &t = tensors[i];
      bool ok = true;
      for (auto [text, field, what] :
           {std::tuple(std::string_view(t.name), Field::Name, "name"),
            std::tuple(std::string_view(t.key), Field::Whole, "key")})
        if (std::string why = unusableText(text, false); !why.empty()) {
          error(site(kind, i, field), std::string(side) + " tensor " +
                                          std::to_string(i) + ": its " +
                                          what + " " + why)
              .hint("names and keys are UTF-8, as metadata.json and "
                    "safetensors headers require");
          ok = false;
        }
      if (t.file >= files.size()) {
        error(site(kind, i, Field::File),
              std::string(side) + " tensor " + std::to_string(i) + " names " +
                  side + " file " + std::to_string(t.file) +
                  ", but the plan lists " +
                  plural(files.size(), (std::string(side) + " file").c_str()))
            .hint("file ids count from 0 in the order of the file lines");
        ok = false;
      } else {
        auto [it, inserted] = byName.emplace(
            std::pair<uint32_t, std::string_view>(t.file, t.name), i);
        if (!inserted) {
          auto diag = error(site(kind, i, Field::Name),
                            std::string(side) + " tensor " + quote(t.name) +
                                " of file " + quote(files[t.file].path) +
                                " is listed twice");
          note(diag, site(kind, it->second, Field::Name), "first listed here");
          diag.hint("list each stored tensor once and refer to it by its id");
          ok = false;
        }
      }
      ok = checkGeometry(kind, i, t) && ok;
      if (ok && t.data)
        ok = checkDataOffsets(destination, i, t);
      usable[i] = ok;
    }
  }

  /// The key's shape, the box and the flat range of a stored tensor.
  bool checkGeometry(Kind kind, uint32_t i, const plan::StoredTensor &t) {
    const std::vector<int64_t> &shape = t.globalShape;
    std::optional<int64_t> count = elementCount(shape);
    int64_t bytes = 0;
    if (std::any_of(shape.begin(), shape.end(),
                    [](int64_t e) { return e < 0; }) ||
        !count ||
        __builtin_mul_overflow(*count, int64_t(dtypeSize(t.dtype)), &bytes)) {
      error(site(kind, i, Field::Type), "key " + quote(t.key) +
                                            " has an invalid global shape " +
                                            formatShape(shape))
          .hint("extents are non-negative and the tensor has fewer than 2^63 "
                "bytes");
      return false;
    }
    if (t.box.rank() != shape.size()) {
      error(site(kind, i, Field::Box),
            "box " + t.box.toString() + " has " +
                plural(t.box.rank(), "dimension") + ", but key " +
                quote(t.key) + " has " + plural(shape.size(), "dimension") +
                " (" + typeText(t.dtype, shape) + ")")
          .hint("a box gives one BEGIN:END interval per dimension of the key");
      return false;
    }
    if (!insideShape(t.box, shape)) {
      error(site(kind, i, Field::Box),
            "box " + t.box.toString() + " lies outside the global shape " +
                formatShape(shape) + " of key " + quote(t.key))
          .hint("0 <= BEGIN <= END <= extent in every dimension");
      return false;
    }
    if (t.flat) {
      int64_t volume = t.box.volume();
      const FlatElementRange &f = *t.flat;
      if (!(0 <= f.begin && f.begin < f.end && f.end <= volume)) {
        std::string range = "flat range [" + std::to_string(f.begin) + ":" +
                            std::to_string(f.end) + "]";
        error(site(kind, i, Field::Flat),
              f.begin == f.end ? range + " is empty"
                               : range + " does not lie within the " +
                                     plural(volume, "element") + " of box " +
                                     t.box.toString())
            .hint("flat [A:B] stores elements A to B-1 of the row-major "
                  "flattening of the box: 0 <= A < B <= " +
                  std::to_string(volume));
        return false;
      }
    }
    return true;
  }

  /// A source tensor's recorded data offsets hold its stored bytes.
  bool checkDataOffsets(bool destination, uint32_t i,
                        const plan::StoredTensor &t) {
    Kind kind = destination ? Kind::DestinationTensor : Kind::SourceTensor;
    if (destination) {
      error(site(kind, i, Field::Data),
            "destination tensor " + std::to_string(i) +
                " records data offsets; only source tensors do")
          .hint("a source tensor's offsets are what aoa-run expects to "
                "find; remove 'data' from destination tensors");
      return false;
    }
    // checkGeometry bounds the key's bytes, and so the stored ones.
    uint64_t bytes = uint64_t(t.storedElements()) * dtypeSize(t.dtype);
    const plan::ByteRange &data = *t.data;
    if (data.begin <= data.end && data.end - data.begin == bytes)
      return true;
    error(site(kind, i, Field::Data),
          "data offsets [" + std::to_string(data.begin) + ":" +
              std::to_string(data.end) + "] do not hold the " +
              std::to_string(bytes) + " bytes of " +
              typeText(t.dtype, t.storedShape()) + " that the tensor stores")
        .hint("'data [BEGIN:END]' gives the tensor's data_offsets in its "
              "file's safetensors header: END - BEGIN is its byte size");
    return false;
  }

  static bool insideShape(const Box &box, llvm::ArrayRef<int64_t> shape) {
    for (size_t d = 0; d < box.rank(); ++d)
      if (box.dim(d).begin < 0 || box.dim(d).begin > box.dim(d).end ||
          box.dim(d).end > shape[d])
        return false;
    return true;
  }

  void checkAddedKeys() {
    std::unordered_map<std::string_view, uint32_t> seen;
    for (uint32_t i = 0; i < plan_.addedKeys.size() && !errors_.stopped();
         ++i) {
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

  /// Copied files land beside the destination files: they must stay inside
  /// the destination, and must not be one of its files or metadata.json.
  void checkCopiedFiles() {
    std::unordered_map<std::string, uint32_t> seen;
    std::unordered_map<std::string, uint32_t> written;
    for (uint32_t f = 0; f < plan_.destinationFiles.size(); ++f)
      written.emplace(lexicallyNormal(plan_.destinationFiles[f].path), f);
    for (uint32_t i = 0; i < plan_.copiedFiles.size() && !errors_.stopped();
         ++i) {
      const std::string &path = plan_.copiedFiles[i];
      PlanSite where = site(Kind::CopyFile, i, Field::Path);
      if (std::string why = unusableText(path, true); !why.empty()) {
        error(where, "copied file " + quote(path) + " " + why)
            .hint("file paths are UTF-8 without control characters");
        continue;
      }
      if (path.empty() || escapesDirectory(path)) {
        error(where, "copied file " + quote(path) +
                         " is not a path inside the source and destination "
                         "directories")
            .hint("copied paths are relative, non-empty and have no '..' "
                  "components");
        continue;
      }
      if (isReservedName(path)) {
        error(where, "copied file " + quote(path) +
                         " would replace a file that aoa-run writes itself")
            .hint("metadata.json, model.safetensors.index.json, .aoa-run/, "
                  ".aoa/ and temporary names (.NAME.tmp.*) are reserved");
        continue;
      }
      std::string normal = lexicallyNormal(path);
      if (auto it = written.find(normal); it != written.end()) {
        auto diag = error(where, "copied file " + quote(path) +
                                     " is also a destination file");
        note(diag, site(Kind::DestinationFile, it->second, Field::Path),
             "the destination file");
        diag.hint("a destination file is written by the plan; do not copy "
                  "it as well");
        continue;
      }
      auto [it, inserted] = seen.emplace(normal, i);
      if (!inserted) {
        auto diag = error(where, "copied file " + quote(path) +
                                     " is listed twice");
        note(diag, site(Kind::CopyFile, it->second, Field::Path),
             "first listed here");
        diag.hint("list each copied file once");
      }
    }
  }

  /// Destination and copied files share one directory tree: a path cannot
  /// be a file and a directory at once (`x` and `x/y`), and no directory may
  /// take the name of a file aoa-run writes itself (`metadata.json/x`).
  /// Caught here, not by the file system halfway through a run.
  void checkDestinationPathConflicts() {
    struct Placed {
      Kind kind;
      uint32_t index;
      std::string path;
    };
    std::vector<Placed> placed;
    for (uint32_t f = 0; f < plan_.destinationFiles.size(); ++f)
      placed.push_back(
          {Kind::DestinationFile, f, plan_.destinationFiles[f].path});
    for (uint32_t i = 0; i < plan_.copiedFiles.size(); ++i)
      placed.push_back({Kind::CopyFile, i, plan_.copiedFiles[i]});
    std::unordered_map<std::string, size_t> fileAt;
    for (size_t p = 0; p < placed.size(); ++p)
      fileAt.emplace(lexicallyNormal(placed[p].path), p);
    auto describe = [](const Placed &p) {
      return std::string(p.kind == Kind::DestinationFile ? "destination file "
                                                         : "copied file ") +
             quote(p.path);
    };
    for (const Placed &p : placed) {
      if (errors_.stopped())
        return;
      std::string normal = lexicallyNormal(p.path);
      for (size_t slash = normal.find('/', 1); slash != std::string::npos;
           slash = normal.find('/', slash + 1)) {
        std::string directory = normal.substr(0, slash);
        PlanSite where = site(p.kind, p.index, Field::Path);
        if (directory == "metadata.json" ||
            directory == plan::kHuggingFaceIndexName) {
          error(where, describe(p) + " needs a directory " + quote(directory) +
                           ", a name aoa-run writes a file to")
              .hint("metadata.json and model.safetensors.index.json are "
                    "reserved; rename the directory");
          break;
        }
        auto other = fileAt.find(directory);
        if (other == fileAt.end())
          continue;
        const Placed &file = placed[other->second];
        auto diag = error(where, describe(p) + " needs a directory " +
                                     quote(directory) + ", but " +
                                     describe(file) + " is a file there");
        note(diag, site(file.kind, file.index, Field::Path), "the file");
        diag.hint("a path cannot be both a file and a directory; rename one "
                  "of them");
        break;
      }
    }
  }

  /// A Hugging Face directory maps each tensor name to one file
  /// (model.safetensors.index.json), and loaders read whole tensors by
  /// name: every destination key is stored once, whole, under its own name.
  void checkHuggingFaceDestination() {
    if (plan_.destinationFormat != plan::DestinationFormat::HuggingFace)
      return;
    std::unordered_map<std::string_view, uint32_t> stored;
    for (uint32_t t = 0;
         t < plan_.destinationTensors.size() && !errors_.stopped(); ++t) {
      const plan::StoredTensor &tensor = plan_.destinationTensors[t];
      if (tensor.name != tensor.key) {
        error(site(Kind::DestinationTensor, t, Field::Name),
              "destination tensor " + std::to_string(t) + " of key " +
                  quote(tensor.key) + " is named " + quote(tensor.name) +
                  " in its file")
            .hint("a Hugging Face directory stores each key under its own "
                  "name");
        continue;
      }
      bool whole = !tensor.flat && tensor.box.rank() == tensor.globalShape.size();
      for (size_t d = 0; whole && d < tensor.box.rank(); ++d)
        whole = tensor.box.dim(d).begin == 0 &&
                tensor.box.dim(d).end == tensor.globalShape[d];
      if (!whole) {
        error(site(Kind::DestinationTensor, t, Field::Box),
              "destination tensor " + std::to_string(t) + " holds only part "
                  "of key " + quote(tensor.key))
            .hint("a Hugging Face directory stores every key whole in one "
                  "file; compile with a Hugging Face destination layout");
        continue;
      }
      auto [it, inserted] = stored.emplace(tensor.key, t);
      if (!inserted) {
        auto diag = error(site(Kind::DestinationTensor, t),
                          "key " + quote(tensor.key) + " is stored twice");
        note(diag, site(Kind::DestinationTensor, it->second),
             "first stored here");
        diag.hint("a Hugging Face index maps each key to one file");
      }
    }
  }

  bool checkRoundCounts() {
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

  //===--- Rounds --------------------------------------------------------===//

  /// Per buffer of the round being checked: the instruction defining it.
  static constexpr uint32_t kUndefined = UINT32_MAX;
  std::vector<uint32_t> definer_;
  std::vector<bool> declOk_;

  void checkRound(uint32_t r, uint32_t k) {
    const plan::Round &round = plan_.programs[r].rounds[k];
    const std::vector<plan::Instruction> &list = round.instructions;
    definer_.assign(round.buffers.size(), kUndefined);
    declOk_.assign(round.buffers.size(), false);

    // Definitions first, so uses can say "used before it is defined".
    for (uint32_t i = 0; i < list.size(); ++i) {
      const plan::Instruction &in = list[i];
      forEachResult(in, [&](uint32_t id, uint32_t item) {
        if (id >= round.buffers.size()) {
          error(at(r, k, i, Field::Result, item),
                "buffer %" + std::to_string(id) +
                    " is not declared: the round has " +
                    plural(round.buffers.size(), "buffer"))
              .hint("declare every buffer of a round in Round::buffers");
        } else if (definer_[id] != kUndefined) {
          auto diag = error(at(r, k, i, Field::Result, item),
                            "buffer %" + std::to_string(id) +
                                " is defined twice in this round");
          note(diag,
               at(r, k, definer_[id], Field::Result,
                  resultItem(list[definer_[id]], id)),
               "first defined here");
          diag.hint("every read, recv and copy defines new buffers");
        } else {
          definer_[id] = i;
          if (checkedBytes(round.buffers[id])) {
            declOk_[id] = true;
          } else {
            error(at(r, k, i, Field::ResultType, item),
                  "buffer %" + std::to_string(id) + " of type " +
                      typeText(round.buffers[id]) +
                      " has no valid size in bytes")
                .hint("extents are non-negative and a buffer has fewer than "
                      "2^63 bytes");
          }
        }
      });
    }
    for (uint32_t id = 0; id < round.buffers.size(); ++id)
      if (definer_[id] == kUndefined)
        error(roundSite(r, k),
              "buffer %" + std::to_string(id) +
                  " is declared, but no instruction of the round defines it")
            .hint("every buffer of a round is the result of one read, recv or "
                  "copy");

    int phase = 0;
    for (uint32_t i = 0; i < list.size() && !errors_.stopped(); ++i) {
      const plan::Instruction &in = list[i];
      int p = phaseOf(in.opcode);
      if (p < phase)
        error(at(r, k, i), "'" + std::string(plantext::opcodeName(in.opcode)) +
                               "' comes after " + phaseName(phase) +
                               " in this round")
            .hint(kPhaseHint);
      phase = std::max(phase, p);
      switch (in.opcode) {
      case Opcode::Read:
        checkRead(r, k, i, round);
        break;
      case Opcode::Send:
      case Opcode::Recv:
        checkExchangeInstruction(r, k, i, round);
        break;
      case Opcode::Copy:
        checkCopy(r, k, i, round);
        break;
      case Opcode::Write:
        checkWrite(r, k, i, round);
        break;
      }
    }
  }

  static std::string phaseName(int phase) {
    switch (phase) {
    case 1:
      return "the exchange (send, recv)";
    case 2:
      return "a copy";
    case 3:
      return "a write";
    default:
      return "a read";
    }
  }

  template <typename Fn>
  static void forEachResult(const plan::Instruction &in, Fn fn) {
    switch (in.opcode) {
    case Opcode::Read:
    case Opcode::Copy:
      fn(in.buffer, 0);
      return;
    case Opcode::Recv:
      for (uint32_t j = 0; j < in.buffers.size(); ++j)
        fn(in.buffers[j], j);
      return;
    case Opcode::Send:
    case Opcode::Write:
      return;
    }
  }

  static uint32_t resultItem(const plan::Instruction &in, uint32_t id) {
    if (in.opcode == Opcode::Recv)
      for (uint32_t j = 0; j < in.buffers.size(); ++j)
        if (in.buffers[j] == id)
          return j;
    return 0;
  }

  /// True when buffer `id` may be used by instruction `i`: defined earlier in
  /// the round, with a valid declaration.
  bool usable(uint32_t r, uint32_t k, uint32_t i, uint32_t id,
              const PlanSite &use) {
    const plan::Round &round = plan_.programs[r].rounds[k];
    if (id >= definer_.size() || definer_[id] == kUndefined) {
      error(use,
            "buffer %" + std::to_string(id) + " is not defined in this round")
          .hint("buffers live for one round: define it in this round with a "
                "read, recv or copy");
      return false;
    }
    if (definer_[id] >= i) {
      auto diag = error(use, "buffer %" + std::to_string(id) +
                                 " is used before it is defined");
      note(diag,
           at(r, k, definer_[id], Field::Result,
              resultItem(round.instructions[definer_[id]], id)),
           "defined here");
      diag.hint(kPhaseHint);
      return false;
    }
    return declOk_[id];
  }

  const plan::File *fileOf(bool destination, const plan::StoredTensor &t) {
    const std::vector<plan::File> &files =
        destination ? plan_.destinationFiles : plan_.sourceFiles;
    return t.file < files.size() ? &files[t.file] : nullptr;
  }

  /// The tensor an instruction reads or writes, when it exists and is
  /// usable, after checking that this rank owns its file.
  const plan::StoredTensor *tensorOf(uint32_t r, uint32_t k, uint32_t i,
                                     bool destination) {
    const plan::Instruction &in = plan_.programs[r].rounds[k].instructions[i];
    const std::vector<plan::StoredTensor> &tensors =
        destination ? plan_.destinationTensors : plan_.sourceTensors;
    const char *side = destination ? "destination" : "source";
    if (in.tensor >= tensors.size()) {
      error(at(r, k, i, Field::Tensor),
            std::string(side) + " tensor " + std::to_string(in.tensor) +
                " does not exist: the plan has " +
                plural(tensors.size(), (std::string(side) + " tensor").c_str()))
          .hint("tensor ids count from 0 in the order of the '" +
                std::string(side) + "-tensor' lines");
      return nullptr;
    }
    const std::vector<bool> &ok =
        destination ? destinationUsable_ : sourceUsable_;
    if (!ok[in.tensor])
      return nullptr; // reported with the tensor
    const plan::StoredTensor &t = tensors[in.tensor];
    const plan::File *file = fileOf(destination, t);
    if (file->rank != r && file->rank < plan_.ranks) {
      auto diag = error(at(r, k, i, Field::Tensor),
                        "rank " + std::to_string(r) + " " +
                            (destination ? "writes" : "reads") + " " + side +
                            " tensor " + std::to_string(in.tensor) +
                            ", but its file " + quote(file->path) +
                            " belongs to rank " + std::to_string(file->rank));
      note(diag,
           site(destination ? Kind::DestinationFile : Kind::SourceFile, t.file,
                Field::Rank),
           "the file's rank is given here");
      diag.hint(std::string("a rank ") + (destination ? "writes" : "reads") +
                " only the files it owns; move the instruction to rank " +
                std::to_string(file->rank));
    }
    return &t;
  }

  /// The region lies in the key, in the stored box and in its flat range.
  bool checkRegion(uint32_t r, uint32_t k, uint32_t i,
                   const plan::StoredTensor &t, bool destination) {
    const Box &region = plan_.programs[r].rounds[k].instructions[i].region;
    PlanSite where = at(r, k, i, Field::Region);
    std::string id =
        std::string(destination ? "destination" : "source") + " tensor " +
        std::to_string(plan_.programs[r].rounds[k].instructions[i].tensor);
    if (region.rank() != t.globalShape.size()) {
      error(where, "region " + region.toString() + " has " +
                       plural(region.rank(), "dimension") + ", but key " +
                       quote(t.key) + " has " +
                       plural(t.globalShape.size(), "dimension") + " (" +
                       typeText(t.dtype, t.globalShape) + ")")
          .hint("regions are boxes in the key's global coordinates, one "
                "BEGIN:END interval per dimension");
      return false;
    }
    if (!insideShape(region, t.globalShape)) {
      error(where, "region " + region.toString() +
                       " lies outside the global shape " +
                       formatShape(t.globalShape) + " of key " + quote(t.key))
          .hint("regions are boxes in the key's global coordinates: 0 <= "
                "BEGIN <= END <= extent");
      return false;
    }
    if (!t.box.contains(region)) {
      error(where, "region " + region.toString() + " is not inside " + id +
                       " (" + quote(t.name) + "), which holds " +
                       t.box.toString() + " of key " + quote(t.key))
          .hint(destination ? "write each region into a destination tensor "
                              "whose box contains it"
                            : "read each region from a source tensor whose "
                              "box contains it");
      return false;
    }
    if (t.flat && region.volume() != 0) {
      std::vector<int64_t> last = region.offsets();
      for (size_t d = 0; d < region.rank(); ++d)
        last[d] = region.dim(d).end - 1;
      int64_t first = rowMajorIndex(t.box, region.offsets()).value_or(-1);
      int64_t final = rowMajorIndex(t.box, last).value_or(-1);
      if (first < t.flat->begin || final >= t.flat->end) {
        error(where, "region " + region.toString() + " is not inside " + id +
                         " (" + quote(t.name) + "): its elements lie at " +
                         "flat indices " + std::to_string(first) + " to " +
                         std::to_string(final) + " of box " + t.box.toString() +
                         ", but the tensor stores only [" +
                         std::to_string(t.flat->begin) + ":" +
                         std::to_string(t.flat->end) + "]")
            .hint("the element at point p of a flat tensor is stored at "
                  "rowMajorIndex(box, p) - A; a region must lie within "
                  "flat [A:B]");
        return false;
      }
    }
    return true;
  }

  void checkRead(uint32_t r, uint32_t k, uint32_t i, const plan::Round &round) {
    const plan::Instruction &in = round.instructions[i];
    const plan::StoredTensor *t = tensorOf(r, k, i, false);
    if (!t || !checkRegion(r, k, i, *t, false))
      return;
    if (in.buffer >= round.buffers.size() || !declOk_[in.buffer])
      return;
    const plan::BufferDecl &decl = round.buffers[in.buffer];
    if (decl.dtype != t->dtype)
      error(at(r, k, i, Field::ResultType),
            "read gives " + std::string(dtypeName(t->dtype)) +
                " data, but buffer %" + std::to_string(in.buffer) +
                " is declared " + typeText(decl))
          .hint("a read does not convert; declare the buffer as the stored "
                "dtype and cast with a copy");
    else if (decl.shape != in.region.shape())
      error(at(r, k, i, Field::ResultType),
            "buffer %" + std::to_string(in.buffer) + " is declared " +
                typeText(decl) + ", but region " + in.region.toString() +
                " has shape " + formatShape(in.region.shape()))
          .hint("a read fills its buffer with exactly the region, in "
                "row-major order");
  }

  void checkWrite(uint32_t r, uint32_t k, uint32_t i,
                  const plan::Round &round) {
    const plan::Instruction &in = round.instructions[i];
    const plan::StoredTensor *t = tensorOf(r, k, i, true);
    bool regionOk = t && checkRegion(r, k, i, *t, true);
    if (!usable(r, k, i, in.buffer, at(r, k, i, Field::Operand)) || !regionOk)
      return;
    const plan::BufferDecl &decl = round.buffers[in.buffer];
    if (decl.dtype != t->dtype)
      error(at(r, k, i, Field::Operand),
            "buffer %" + std::to_string(in.buffer) + " holds " +
                std::string(dtypeName(decl.dtype)) +
                " data, but destination tensor " + std::to_string(in.tensor) +
                " (key " + quote(t->key) + ") is " +
                std::string(dtypeName(t->dtype)))
          .hint("a write does not convert; cast with a copy before it");
    else if (decl.shape != in.region.shape())
      error(at(r, k, i, Field::Operand),
            "buffer %" + std::to_string(in.buffer) + " is " + typeText(decl) +
                ", but region " + in.region.toString() + " has shape " +
                formatShape(in.region.shape()))
          .hint("a write stores exactly its buffer into the region, in "
                "row-major order");
  }

  void checkExchangeInstruction(uint32_t r, uint32_t k, uint32_t i,
                                const plan::Round &round) {
    const plan::Instruction &in = round.instructions[i];
    bool send = in.opcode == Opcode::Send;
    if (in.peer >= plan_.ranks)
      error(at(r, k, i, Field::Peer), "rank " + std::to_string(in.peer) +
                                          " does not exist: the plan has " +
                                          plural(plan_.ranks, "rank"))
          .hint("ranks count from 0 to ranks - 1");
    else if (in.peer == r)
      error(at(r, k, i, Field::Peer),
            std::string("rank ") + std::to_string(r) +
                (send ? " sends to itself" : " receives from itself"))
          .hint("a rank uses its own buffers directly; drop the send and the "
                "recv");
    if (in.buffers.empty()) {
      error(at(r, k, i),
            std::string(send ? "send" : "recv") + " moves no buffers")
          .hint("list the buffers packed into the message");
      return;
    }
    if (!send)
      return; // its buffers are definitions, checked above
    for (uint32_t j = 0; j < in.buffers.size(); ++j) {
      uint32_t id = in.buffers[j];
      if (!usable(r, k, i, id, at(r, k, i, Field::Operand, j)))
        continue;
      const plan::Instruction &def = round.instructions[definer_[id]];
      if (def.opcode != Opcode::Read) {
        auto diag = error(at(r, k, i, Field::Operand, j),
                          "buffer %" + std::to_string(id) + " comes from '" +
                              std::string(plantext::opcodeName(def.opcode)) +
                              "'; a round sends only buffers it has read");
        note(diag, at(r, k, definer_[id], Field::Result, resultItem(def, id)),
             "defined here");
        diag.hint("forward received data in a later round, after reading "
                  "nothing new: sends and receives of a round are posted "
                  "together");
      }
    }
  }

  void checkCopy(uint32_t r, uint32_t k, uint32_t i, const plan::Round &round) {
    const plan::Instruction &in = round.instructions[i];
    if (!usable(r, k, i, in.input, at(r, k, i, Field::Operand)))
      return;
    DType dtype = round.buffers[in.input].dtype;
    std::vector<int64_t> shape = round.buffers[in.input].shape;
    for (uint32_t j = 0; j < in.transform.size(); ++j) {
      std::string why;
      if (!applyStep(in.transform[j], dtype, shape, why)) {
        error(at(r, k, i, Field::Step, j), why)
            .hint("steps apply in order to the input buffer %" +
                  std::to_string(in.input) + " (" +
                  typeText(round.buffers[in.input]) + ")");
        return;
      }
    }
    if (in.buffer >= round.buffers.size() || !declOk_[in.buffer])
      return;
    const plan::BufferDecl &decl = round.buffers[in.buffer];
    if (decl.dtype != dtype || decl.shape != shape)
      error(at(r, k, i, Field::ResultType),
            "copy gives " + typeText(dtype, shape) + ", but buffer %" +
                std::to_string(in.buffer) + " is declared " + typeText(decl))
          .hint("the output's type is the input's (" +
                typeText(round.buffers[in.input]) +
                ") after the transform steps, in order");
  }

  //===--- Exchanges across ranks ----------------------------------------===//

  /// Within round k, the j-th recv on rank b from rank a takes the j-th send
  /// of rank a to rank b (MessagePairing.h); both must move the same buffer
  /// types in order. Unmatched sends are reported before unmatched recvs.
  void checkExchanges(uint32_t k) {
    std::map<std::pair<uint32_t, uint32_t>, plan::LinkMessages> links =
        plan::roundMessages(plan_, k);
    for (const auto &[link, messages] : links) {
      size_t pairs = std::min(messages.sends.size(), messages.recvs.size());
      for (size_t j = 0; j < pairs && !errors_.stopped(); ++j)
        compareMessage(k, link.first, messages.sends[j], link.second,
                       messages.recvs[j]);
      reportUnmatched(k, true, link, messages.sends, messages.recvs.size());
    }
    for (const auto &[link, messages] : links)
      reportUnmatched(k, false, link, messages.recvs, messages.sends.size());
  }

  /// The sends (or recvs) `list` of `link` = (from, to) in round k beyond the
  /// `matched` ones that the other side posts.
  void reportUnmatched(uint32_t k, bool send,
                       std::pair<uint32_t, uint32_t> link,
                       const std::vector<uint32_t> &list, size_t matched) {
    std::string self = std::to_string(send ? link.first : link.second);
    uint32_t peer = send ? link.second : link.first;
    std::string other = std::to_string(peer);
    for (size_t j = matched; j < list.size() && !errors_.stopped(); ++j) {
      auto diag =
          error(at(send ? link.first : link.second, k, list[j]),
                std::string(send ? "send to" : "recv from") + " rank " + other +
                    " has no matching " + (send ? "recv" : "send") + ": rank " +
                    other + (send ? " receives " : " sends ") +
                    plural(matched, "message") + (send ? " from" : " to") +
                    " rank " + self + " in round " + std::to_string(k));
      note(diag, roundSite(peer, k),
           "rank " + other + "'s round " + std::to_string(k) + " is here");
      diag.hint(std::string("every ") +
                (send ? "send needs a recv of the same buffers on"
                      : "recv needs a send of the same buffers from") +
                " the peer in the same round, or the round deadlocks");
    }
  }

  /// The types of an exchange instruction's buffers, or nullopt when one
  /// is not declared (reported above).
  std::optional<std::string> messageTypes(uint32_t r, uint32_t k,
                                          uint32_t i) const {
    const plan::Round &round = plan_.programs[r].rounds[k];
    std::string out;
    for (uint32_t id : round.instructions[i].buffers) {
      if (id >= round.buffers.size())
        return std::nullopt;
      out += (out.empty() ? "" : ", ") + typeText(round.buffers[id]);
    }
    return out;
  }

  void compareMessage(uint32_t k, uint32_t from, uint32_t sendIndex,
                      uint32_t to, uint32_t recvIndex) {
    std::optional<std::string> sent = messageTypes(from, k, sendIndex);
    std::optional<std::string> received = messageTypes(to, k, recvIndex);
    if (!sent || !received || *sent == *received)
      return;
    auto diag = error(at(to, k, recvIndex),
                      "recv from rank " + std::to_string(from) + " expects " +
                          *received + ", but the matching send of rank " +
                          std::to_string(from) + " sends " + *sent);
    note(diag, at(from, k, sendIndex), "the matching send");
    diag.hint("the n-th recv from a peer in a round takes the n-th send of "
              "that peer to this rank in the round; their buffers must have "
              "the same dtypes and shapes, in order");
  }

  const plan::Plan &plan_;
  ErrorLimit &errors_;
  const PlanLocator *locator_;
  std::vector<bool> sourceUsable_, destinationUsable_;
};

} // namespace

bool verifyPlanWith(const plan::Plan &plan, ErrorLimit &errors,
                    const PlanLocator *locator) {
  return PlanChecker(plan, errors, locator).run();
}

bool verifyPlan(const plan::Plan &plan, DiagnosticEngine &diags) {
  ErrorLimit errors(diags);
  return verifyPlanWith(plan, errors, nullptr);
}

} // namespace aoa
