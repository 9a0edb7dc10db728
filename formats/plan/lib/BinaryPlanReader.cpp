//===- BinaryPlanReader.cpp - Binary container -> Plan --------------------===//
//
// The decoder trusts nothing: the header is checked (magic, version, its
// checksum, the file size it records), then the directory (its checksum,
// every section contiguous and inside the file), then each section it needs
// (its checksum, then every count against the bytes left before anything
// is allocated, every index against the table it points into). The first
// problem found is reported, naming the file and the section.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/BinaryPlan.h"

#include "BinaryLayout.h"
#include "ByteCoding.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa {
namespace binplan {

namespace {

std::string hex(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, v);
  return text;
}

/// Where the bytes come from: memory, or a file read by ranges.
class ByteSource {
public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  /// Bytes [offset, offset + size), which the caller checked lie inside.
  virtual bool read(uint64_t offset, uint64_t size, std::string &storage,
                    std::string_view &bytes, std::string &error) = 0;
};

class MemorySource : public ByteSource {
public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  bool read(uint64_t offset, uint64_t size, std::string &,
            std::string_view &bytes, std::string &) override {
    bytes = bytes_.substr(offset, size);
    return true;
  }

private:
  std::string_view bytes_;
};

class FileSource : public ByteSource {
public:
  ~FileSource() override {
    if (fd_ >= 0)
      ::close(fd_);
  }
  bool open(const std::string &path, std::string &error) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
      error = std::strerror(errno);
      return false;
    }
    size_ = uint64_t(st.st_size);
    return true;
  }
  uint64_t size() const override { return size_; }
  bool read(uint64_t offset, uint64_t size, std::string &storage,
            std::string_view &bytes, std::string &error) override {
    storage.resize(size);
    uint64_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd_, storage.data() + done, size - done,
                          off_t(offset + done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        error = n < 0 ? std::strerror(errno) : "unexpected end of file";
        return false;
      }
      done += uint64_t(n);
    }
    bytes = storage;
    return true;
  }

private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

struct DirectoryEntry {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
};

struct TransformList {
  uint32_t first = 0;
  uint32_t count = 0;
};

class Decoder {
public:
  Decoder(const std::string &path, ByteSource &source, DiagnosticEngine &diags)
      : path_(path), source_(source), diags_(diags) {}

  bool header(PlanOrigin *origin);
  bool shared();
  bool rank(uint32_t r);
  plan::Plan take() { return std::move(plan_); }
  uint32_t ranks() const { return plan_.ranks; }

private:
  bool fail(const std::string &what, const std::string &hint = "");
  /// Fetches section `id` and checks its checksum.
  bool fetch(uint64_t id, std::string &storage, std::string_view &bytes);
  /// Reads `count` (a u64) and checks that `count` records of `size` bytes
  /// fit in what is left.
  bool count(ByteCursor &c, uint64_t recordSize, uint64_t &n,
             const char *what);
  bool ints(std::string_view pool, uint64_t first, uint64_t n,
            std::vector<int64_t> &out, const std::string &what);
  bool box(std::string_view pool, uint64_t first, uint64_t rank, Box &out,
           const std::string &what);
  bool string(uint32_t index, std::string &out, const std::string &what);
  bool dtype(uint8_t code, DType &out, const std::string &what);
  bool strings(std::string_view bytes);
  bool files(std::string_view bytes);
  bool tensors(std::string_view bytes);
  bool transforms(std::string_view bytes);
  bool lists(std::string_view bytes);
  bool program(uint32_t r, std::string_view bytes);

  const std::string &path_;
  ByteSource &source_;
  DiagnosticEngine &diags_;
  /// The section being decoded, for messages.
  std::string where_;
  std::vector<DirectoryEntry> directory_;
  std::vector<std::string> strings_;
  std::vector<plan::TransformStep> steps_;
  std::vector<TransformList> transformLists_;
  plan::Plan plan_;
};

bool Decoder::fail(const std::string &what, const std::string &hint) {
  std::string message = "invalid binary plan '" + path_ + "': ";
  if (!where_.empty())
    message += where_ + ": ";
  auto d = diags_.error(SourceLocation{}, message + what);
  d.hint(hint.empty() ? "the file is damaged or was not written by "
                        "aoa-compile; compile the plan again"
                      : hint);
  return false;
}

bool Decoder::header(PlanOrigin *origin) {
  uint64_t fileSize = source_.size();
  std::string storage;
  std::string_view bytes;
  std::string error;
  if (fileSize < sizeof(kMagic) + 4)
    return fail("the file has " + std::to_string(fileSize) +
                " bytes, less than a header (truncated)");
  if (!source_.read(0, std::min<uint64_t>(fileSize, kHeaderSize), storage,
                    bytes, error))
    return fail("cannot read the header: " + error);
  if (!isBinaryPlan(bytes))
    return fail("it does not start with the magic \"AOAPLAN\\0\"",
                "a plan is either the text of aoa-compile --emit=plan-text "
                "(starting with 'aoa-plan') or its binary form");
  ByteCursor c(bytes);
  c.take(sizeof(kMagic));
  uint32_t version = c.u32();
  if (version < kOldestVersion || version > kVersion)
    return fail("unsupported binary plan version " + std::to_string(version) +
                    "; this reader supports version" +
                    (kOldestVersion == kVersion
                         ? " " + std::to_string(kVersion)
                         : "s " + std::to_string(kOldestVersion) + " to " +
                               std::to_string(kVersion)),
                "compile the plan again with this aoa-compile, or run it with "
                "the aoa-run of the aoa-compile that wrote it");
  if (fileSize < kHeaderSize)
    return fail("the file has " + std::to_string(fileSize) +
                " bytes, less than the " + std::to_string(kHeaderSize) +
                "-byte header (truncated)");
  uint64_t headerSum = checksum(bytes.data(), kHeaderChecksumOffset);
  uint32_t flags = c.u32();
  plan_.ranks = c.u32();
  uint32_t format = c.u32();
  plan_.memoryBudget = c.i64();
  uint64_t sourceHash = c.u64();
  uint64_t destinationHash = c.u64();
  uint32_t sections = c.u32();
  uint32_t reserved = c.u32();
  uint64_t recordedSize = c.u64();
  uint64_t directorySum = c.u64();
  uint64_t recordedHeaderSum = c.u64();
  if (headerSum != recordedHeaderSum)
    return fail("the header's checksum does not match (recorded " +
                hex(recordedHeaderSum) + ", computed " + hex(headerSum) + ")");
  if (recordedSize != fileSize)
    return fail("the header records " + std::to_string(recordedSize) +
                " bytes, the file has " + std::to_string(fileSize) +
                (fileSize < recordedSize ? " (truncated)" : ""));
  if (flags & ~kKnownFlags)
    return fail("unknown header flags " + hex(flags & ~kKnownFlags));
  if (reserved != 0)
    return fail("a reserved header field is not zero");
  if (plan_.ranks == 0 || plan_.ranks > kMaxRanks)
    return fail("the rank count " + std::to_string(plan_.ranks) +
                " is outside 1 to " + std::to_string(kMaxRanks));
  if (format > uint32_t(plan::DestinationFormat::HuggingFace))
    return fail("unknown destination format " + std::to_string(format));
  plan_.destinationFormat = plan::DestinationFormat(format);
  if (uint64_t(sections) != uint64_t(kSharedSections) + plan_.ranks)
    return fail("the header lists " + std::to_string(sections) +
                " sections; " + std::to_string(plan_.ranks) + " ranks need " +
                std::to_string(uint64_t(kSharedSections) + plan_.ranks));
  if (origin) {
    origin->sourceLayoutHash.reset();
    origin->destinationLayoutHash.reset();
    if (flags & kHasSourceLayoutHash)
      origin->sourceLayoutHash = sourceHash;
    if (flags & kHasDestinationLayoutHash)
      origin->destinationLayoutHash = destinationHash;
  }

  uint64_t directorySize = uint64_t(sections) * kDirectoryEntrySize;
  if (directorySize > fileSize - kHeaderSize)
    return fail("the section directory runs past the end of the file");
  if (!source_.read(kHeaderSize, directorySize, storage, bytes, error))
    return fail("cannot read the section directory: " + error);
  if (checksum(bytes.data(), bytes.size()) != directorySum)
    return fail("the section directory's checksum does not match");
  ByteCursor d(bytes);
  uint64_t expected = kHeaderSize + directorySize;
  directory_.resize(sections);
  for (uint32_t i = 0; i < sections; ++i) {
    DirectoryEntry &e = directory_[i];
    e.offset = d.u64();
    e.size = d.u64();
    e.checksum = d.u64();
    if (e.offset != expected || e.size > fileSize - e.offset)
      return fail("the directory places " + sectionName(i) + " at bytes " +
                  std::to_string(e.offset) + " + " + std::to_string(e.size) +
                  ", expected at " + std::to_string(expected) +
                  " inside the file's " + std::to_string(fileSize) + " bytes");
    expected += e.size;
  }
  if (expected != fileSize)
    return fail("the sections end at byte " + std::to_string(expected) +
                ", the file has " + std::to_string(fileSize));
  return true;
}

bool Decoder::fetch(uint64_t id, std::string &storage,
                    std::string_view &bytes) {
  where_.clear();
  const DirectoryEntry &e = directory_[id];
  std::string error;
  if (!source_.read(e.offset, e.size, storage, bytes, error))
    return fail("cannot read " + sectionName(id) + ": " + error);
  uint64_t sum = checksum(bytes.data(), bytes.size());
  if (sum != e.checksum)
    return fail(sectionName(id) + "'s checksum does not match (recorded " +
                hex(e.checksum) + ", computed " + hex(sum) + ")");
  where_ = sectionName(id);
  return true;
}

bool Decoder::count(ByteCursor &c, uint64_t recordSize, uint64_t &n,
                    const char *what) {
  if (!c.has(8))
    return fail("ends before the count of " + std::string(what));
  n = c.u64();
  if (n > c.remaining() / recordSize)
    return fail("the count of " + std::string(what) + ", " + std::to_string(n) +
                ", is more than the section's bytes hold");
  return true;
}

bool Decoder::ints(std::string_view pool, uint64_t first, uint64_t n,
                   std::vector<int64_t> &out, const std::string &what) {
  uint64_t available = pool.size() / 8;
  if (first > available || n > available - first)
    return fail(what + ": integers " + std::to_string(first) + " + " +
                std::to_string(n) + " lie outside the section's " +
                std::to_string(available));
  ByteCursor c(pool.substr(first * 8, n * 8));
  out.resize(n);
  for (int64_t &v : out)
    v = c.i64();
  return true;
}

bool Decoder::box(std::string_view pool, uint64_t first, uint64_t rank,
                  Box &out, const std::string &what) {
  std::vector<int64_t> values;
  if (rank > pool.size() / 16)
    return fail(what + ": box rank " + std::to_string(rank) +
                " is more than the section holds");
  if (!ints(pool, first, 2 * rank, values, what))
    return false;
  std::vector<Interval> dims(rank);
  for (uint64_t i = 0; i < rank; ++i)
    dims[i] = Interval{values[2 * i], values[2 * i + 1]};
  out = Box(dims);
  return true;
}

bool Decoder::string(uint32_t index, std::string &out,
                     const std::string &what) {
  if (index >= strings_.size())
    return fail(what + " refers to string " + std::to_string(index) +
                ", but the string table has " +
                std::to_string(strings_.size()));
  out = strings_[index];
  return true;
}

bool Decoder::dtype(uint8_t code, DType &out, const std::string &what) {
  if (code >= std::size(kAllDTypes))
    return fail(what + " has an unknown dtype code " + std::to_string(code));
  out = DType(code);
  return true;
}

bool Decoder::strings(std::string_view bytes) {
  ByteCursor c(bytes);
  uint64_t n, blob;
  if (!count(c, 8, n, "strings"))
    return false;
  if (!c.has(8))
    return fail("ends before the string bytes' size");
  blob = c.u64();
  if (!c.has(n * 8) || blob > c.remaining() - n * 8)
    return fail("the string ends and bytes run past the section");
  std::string_view ends = c.take(n * 8);
  std::string_view data = c.take(blob);
  ByteCursor e(ends);
  strings_.resize(n);
  uint64_t begin = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t end = e.u64();
    if (end < begin || end > blob)
      return fail("string " + std::to_string(i) + " ends at byte " +
                  std::to_string(end) + ", outside " + std::to_string(begin) +
                  " to " + std::to_string(blob));
    strings_[i] = std::string(data.substr(begin, end - begin));
    begin = end;
  }
  if (begin != blob)
    return fail("the strings use " + std::to_string(begin) + " of " +
                std::to_string(blob) + " bytes");
  return true;
}

bool Decoder::files(std::string_view bytes) {
  ByteCursor c(bytes);
  if (!c.has(16))
    return fail("ends before the file counts");
  uint64_t sources = c.u64(), destinations = c.u64();
  if (sources > c.remaining() / kFileRecordSize ||
      destinations > c.remaining() / kFileRecordSize - sources)
    return fail("the file counts " + std::to_string(sources) + " + " +
                std::to_string(destinations) +
                " are more than the section's bytes hold");
  plan_.sourceFiles.resize(sources);
  plan_.destinationFiles.resize(destinations);
  for (uint64_t i = 0; i < sources + destinations; ++i) {
    bool source = i < sources;
    plan::File &file = source ? plan_.sourceFiles[i]
                              : plan_.destinationFiles[i - sources];
    std::string what = std::string(source ? "source" : "destination") +
                       " file " + std::to_string(source ? i : i - sources);
    uint32_t path = c.u32();
    file.rank = c.u32();
    uint32_t flags = c.u32();
    uint32_t reserved = c.u32();
    uint64_t size = c.u64();
    if (!string(path, file.path, what))
      return false;
    if ((flags & ~kFileHasSize) || reserved)
      return fail(what + " has unknown flags");
    if (flags & kFileHasSize)
      file.size = size;
    else if (size)
      return fail(what + " has a size without its flag");
  }
  if (c.remaining())
    return fail(std::to_string(c.remaining()) + " bytes after the files");
  return true;
}

bool Decoder::tensors(std::string_view bytes) {
  ByteCursor c(bytes);
  if (!c.has(24))
    return fail("ends before the tensor counts");
  uint64_t sources = c.u64(), destinations = c.u64(), intCount = c.u64();
  if (sources > c.remaining() / kTensorRecordSize ||
      destinations > c.remaining() / kTensorRecordSize - sources ||
      intCount != (c.remaining() - (sources + destinations) *
                                       kTensorRecordSize) / 8 ||
      c.remaining() % 8)
    return fail("the tensor and integer counts do not match the section's "
                "size");
  std::string_view records = c.take((sources + destinations) *
                                    kTensorRecordSize);
  std::string_view pool = c.take(intCount * 8);
  ByteCursor r(records);
  plan_.sourceTensors.resize(sources);
  plan_.destinationTensors.resize(destinations);
  for (uint64_t i = 0; i < sources + destinations; ++i) {
    bool source = i < sources;
    plan::StoredTensor &t = source ? plan_.sourceTensors[i]
                                   : plan_.destinationTensors[i - sources];
    std::string what = std::string(source ? "source" : "destination") +
                       " tensor " + std::to_string(source ? i : i - sources);
    t.file = r.u32();
    uint32_t name = r.u32(), key = r.u32(), shapeRank = r.u32();
    uint8_t code = r.u8(), flags = r.u8();
    uint16_t reserved = r.u16();
    uint32_t boxRank = r.u32();
    uint64_t first = r.u64();
    int64_t flatBegin = r.i64(), flatEnd = r.i64();
    uint64_t dataBegin = r.u64(), dataEnd = r.u64();
    if (!string(name, t.name, what + "'s name") ||
        !string(key, t.key, what + "'s key") || !dtype(code, t.dtype, what))
      return false;
    uint64_t filesOfSide =
        source ? plan_.sourceFiles.size() : plan_.destinationFiles.size();
    if (t.file >= filesOfSide)
      return fail(what + " refers to file " + std::to_string(t.file) +
                  ", but there are " + std::to_string(filesOfSide));
    if ((flags & ~(kTensorHasFlat | kTensorHasData)) || reserved)
      return fail(what + " has unknown flags");
    if (!ints(pool, first, shapeRank, t.globalShape, what + "'s shape") ||
        !box(pool, first + shapeRank, boxRank, t.box, what + "'s box"))
      return false;
    if (flags & kTensorHasFlat)
      t.flat = FlatElementRange{flatBegin, flatEnd};
    else if (flatBegin || flatEnd)
      return fail(what + " has a flat range without its flag");
    if (flags & kTensorHasData)
      t.data = plan::ByteRange{dataBegin, dataEnd};
    else if (dataBegin || dataEnd)
      return fail(what + " has data offsets without their flag");
  }
  return true;
}

bool Decoder::transforms(std::string_view bytes) {
  ByteCursor c(bytes);
  if (!c.has(24))
    return fail("ends before the transform counts");
  uint64_t lists = c.u64(), steps = c.u64(), intCount = c.u64();
  if (lists > c.remaining() / kTransformRecordSize ||
      steps > (c.remaining() - lists * kTransformRecordSize) / kStepRecordSize ||
      intCount > (c.remaining() - lists * kTransformRecordSize -
                  steps * kStepRecordSize) / 8)
    return fail("the transform, step and integer counts are more than the "
                "section's bytes hold");
  std::string_view listRecords = c.take(lists * kTransformRecordSize);
  std::string_view stepRecords = c.take(steps * kStepRecordSize);
  std::string_view pool = c.take(intCount * 8);
  if (c.remaining() >= 8)
    return fail(std::to_string(c.remaining()) + " bytes after the transforms");
  ByteCursor s(stepRecords);
  steps_.resize(steps);
  for (uint64_t i = 0; i < steps; ++i) {
    plan::TransformStep &step = steps_[i];
    std::string what = "transform step " + std::to_string(i);
    uint8_t kind = s.u8(), code = s.u8();
    uint16_t reserved = s.u16();
    uint32_t permRank = s.u32(), canonRank = s.u32(), reserved2 = s.u32();
    uint64_t first = s.u64();
    if (kind > uint8_t(plan::TransformStep::Kind::Flatten))
      return fail(what + " has an unknown kind " + std::to_string(kind));
    if (reserved || reserved2)
      return fail(what + " has a reserved field that is not zero");
    step.kind = plan::TransformStep::Kind(kind);
    std::vector<int64_t> axes;
    if (!dtype(code, step.dtype, what) ||
        !ints(pool, first, permRank, axes, what) ||
        !ints(pool, first + permRank, canonRank, step.canonical, what))
      return false;
    for (int64_t axis : axes)
      if (axis < 0 || uint64_t(axis) >= permRank)
        return fail(what + "'s permutation names axis " +
                    std::to_string(axis) + " of " + std::to_string(permRank));
    std::string why;
    std::optional<Permutation> perm = Permutation::fromAxes(axes, permRank, &why);
    if (!perm)
      return fail(what + ": " + why);
    step.permutation = std::move(*perm);
  }
  ByteCursor l(listRecords);
  transformLists_.resize(lists);
  for (uint64_t i = 0; i < lists; ++i) {
    TransformList &list = transformLists_[i];
    list.first = l.u32();
    list.count = l.u32();
    if (list.first > steps || list.count > steps - list.first)
      return fail("transform " + std::to_string(i) + " uses steps " +
                  std::to_string(list.first) + " + " +
                  std::to_string(list.count) + " of " + std::to_string(steps));
  }
  return true;
}

bool Decoder::lists(std::string_view bytes) {
  ByteCursor c(bytes);
  if (!c.has(16))
    return fail("ends before the list counts");
  uint64_t added = c.u64(), copied = c.u64();
  if (added > c.remaining() / 4 || copied > c.remaining() / 4 - added)
    return fail("the list counts are more than the section's bytes hold");
  plan_.addedKeys.resize(added);
  plan_.copiedFiles.resize(copied);
  for (uint64_t i = 0; i < added; ++i)
    if (!string(c.u32(), plan_.addedKeys[i],
                "added key " + std::to_string(i)))
      return false;
  for (uint64_t i = 0; i < copied; ++i)
    if (!string(c.u32(), plan_.copiedFiles[i],
                "copied file " + std::to_string(i)))
      return false;
  if (c.remaining() >= 8)
    return fail(std::to_string(c.remaining()) + " bytes after the lists");
  return true;
}

bool Decoder::program(uint32_t rankId, std::string_view bytes) {
  ByteCursor c(bytes);
  if (!c.has(40))
    return fail("ends before its counts");
  uint64_t rounds = c.u64(), buffers = c.u64(), instructions = c.u64(),
           listCount = c.u64(), intCount = c.u64();
  uint64_t left = c.remaining();
  auto take = [&](uint64_t n, uint64_t size) {
    if (n > left / size)
      return false;
    left -= n * size;
    return true;
  };
  if (!take(rounds, kRoundRecordSize) || !take(buffers, kBufferRecordSize) ||
      !take(instructions, kInstructionRecordSize) || !take(listCount, 4))
    return fail("its round, buffer, instruction and buffer-list counts are "
                "more than the section's bytes hold");
  std::string_view roundRecords = c.take(rounds * kRoundRecordSize);
  std::string_view bufferRecords = c.take(buffers * kBufferRecordSize);
  std::string_view instructionRecords =
      c.take(instructions * kInstructionRecordSize);
  std::string_view listEntries = c.take(listCount * 4);
  size_t padding = (8 - c.offset() % 8) % 8;
  if (!c.has(padding) ||
      c.take(padding).find_first_not_of('\0') != std::string_view::npos)
    return fail("its padding after the buffer lists is missing or not zero");
  if (c.remaining() != intCount * 8 || intCount > c.remaining() / 8)
    return fail("its integer count " + std::to_string(intCount) +
                " does not match the " + std::to_string(c.remaining()) +
                " bytes left");
  std::string_view pool = c.take(intCount * 8);

  plan::RankProgram &program = plan_.programs[rankId];
  program.rounds.resize(rounds);
  ByteCursor rr(roundRecords), br(bufferRecords), ir(instructionRecords);
  uint64_t buffersLeft = buffers, instructionsLeft = instructions;
  std::vector<int64_t> values;
  for (uint64_t k = 0; k < rounds; ++k) {
    plan::Round &round = program.rounds[k];
    std::string roundName = "round " + std::to_string(k);
    uint32_t nb = rr.u32(), ni = rr.u32();
    if (nb > buffersLeft || ni > instructionsLeft)
      return fail(roundName + " declares more buffers or instructions than "
                              "the section holds");
    buffersLeft -= nb;
    instructionsLeft -= ni;
    round.buffers.resize(nb);
    for (uint32_t b = 0; b < nb; ++b) {
      plan::BufferDecl &decl = round.buffers[b];
      std::string what = roundName + ", buffer %" + std::to_string(b);
      uint8_t code = br.u8(), r1 = br.u8();
      uint16_t r2 = br.u16();
      uint32_t shapeRank = br.u32();
      uint64_t first = br.u64();
      if (r1 || r2)
        return fail(what + " has a reserved field that is not zero");
      if (!dtype(code, decl.dtype, what) ||
          !ints(pool, first, shapeRank, decl.shape, what))
        return false;
    }
    round.instructions.resize(ni);
    for (uint32_t i = 0; i < ni; ++i) {
      plan::Instruction &in = round.instructions[i];
      std::string what = roundName + ", instruction " + std::to_string(i);
      uint8_t op = ir.u8(), r1 = ir.u8();
      uint16_t r2 = ir.u16();
      in.buffer = ir.u32();
      in.input = ir.u32();
      in.tensor = ir.u32();
      in.peer = ir.u32();
      uint32_t transform = ir.u32(), regionRank = ir.u32(),
               bufferCount = ir.u32();
      uint64_t firstInt = ir.u64(), firstBuffer = ir.u64();
      if (op > uint8_t(plan::Opcode::Write))
        return fail(what + " has an unknown opcode " + std::to_string(op));
      if (r1 || r2)
        return fail(what + " has a reserved field that is not zero");
      in.opcode = plan::Opcode(op);
      if (transform >= transformLists_.size())
        return fail(what + " refers to transform " + std::to_string(transform) +
                    ", but the transform table has " +
                    std::to_string(transformLists_.size()));
      const TransformList &list = transformLists_[transform];
      in.transform.assign(steps_.begin() + list.first,
                          steps_.begin() + list.first + list.count);
      if (!box(pool, firstInt, regionRank, in.region, what + "'s region"))
        return false;
      if (firstBuffer > listCount || bufferCount > listCount - firstBuffer)
        return fail(what + " lists buffers " + std::to_string(firstBuffer) +
                    " + " + std::to_string(bufferCount) + " of " +
                    std::to_string(listCount));
      ByteCursor lc(listEntries.substr(firstBuffer * 4, uint64_t(bufferCount) * 4));
      in.buffers.resize(bufferCount);
      for (uint32_t &id : in.buffers)
        id = lc.u32();
      // The fields each opcode uses must point inside the plan.
      auto bufferOk = [&](uint32_t id) { return id < nb; };
      bool usesBuffer = in.opcode == plan::Opcode::Read ||
                        in.opcode == plan::Opcode::Copy ||
                        in.opcode == plan::Opcode::Write;
      if (usesBuffer && !bufferOk(in.buffer))
        return fail(what + " refers to buffer %" + std::to_string(in.buffer) +
                    ", but the round declares " + std::to_string(nb));
      if (in.opcode == plan::Opcode::Copy && !bufferOk(in.input))
        return fail(what + " copies buffer %" + std::to_string(in.input) +
                    ", but the round declares " + std::to_string(nb));
      for (uint32_t id : in.buffers)
        if (!bufferOk(id))
          return fail(what + " lists buffer %" + std::to_string(id) +
                      ", but the round declares " + std::to_string(nb));
      uint64_t tensors = in.opcode == plan::Opcode::Read
                             ? plan_.sourceTensors.size()
                         : in.opcode == plan::Opcode::Write
                             ? plan_.destinationTensors.size()
                             : UINT64_MAX;
      if (in.tensor >= tensors)
        return fail(what + " refers to tensor " + std::to_string(in.tensor) +
                    ", but there are " + std::to_string(tensors));
      bool exchanges = in.opcode == plan::Opcode::Send ||
                       in.opcode == plan::Opcode::Recv;
      if (exchanges && in.peer >= plan_.ranks)
        return fail(what + " names peer rank " + std::to_string(in.peer) +
                    ", but the plan has " + std::to_string(plan_.ranks));
    }
  }
  if (buffersLeft || instructionsLeft)
    return fail("the rounds use fewer buffers or instructions than the "
                "section holds");
  return true;
}

bool Decoder::shared() {
  // Strings first: the other tables refer to them.
  for (uint32_t id = 0; id < kSharedSections; ++id) {
    std::string storage;
    std::string_view bytes;
    if (!fetch(id, storage, bytes))
      return false;
    bool decoded = id == kStrings    ? strings(bytes)
                   : id == kFiles    ? files(bytes)
                   : id == kTensors  ? tensors(bytes)
                   : id == kTransforms ? transforms(bytes)
                                       : lists(bytes);
    if (!decoded)
      return false;
  }
  plan_.programs.resize(plan_.ranks);
  return true;
}

bool Decoder::rank(uint32_t r) {
  std::string storage;
  std::string_view bytes;
  return fetch(kSharedSections + uint64_t(r), storage, bytes) &&
         program(r, bytes);
}

std::optional<plan::Plan> decodeAll(const std::string &path,
                                    ByteSource &source,
                                    DiagnosticEngine &diags,
                                    PlanOrigin *origin) {
  Decoder decoder(path, source, diags);
  if (!decoder.header(origin) || !decoder.shared())
    return std::nullopt;
  for (uint32_t r = 0; r < decoder.ranks(); ++r)
    if (!decoder.rank(r))
      return std::nullopt;
  return decoder.take();
}

} // namespace

std::optional<plan::Plan> readBinaryPlanBytes(const std::string &path,
                                              std::string_view bytes,
                                              DiagnosticEngine &diags,
                                              PlanOrigin *origin) {
  MemorySource source(bytes);
  return decodeAll(path, source, diags, origin);
}

std::optional<plan::Plan> readBinaryPlan(const std::string &path,
                                         DiagnosticEngine &diags,
                                         PlanOrigin *origin) {
  FileSource source;
  std::string error;
  if (!source.open(path, error)) {
    diags.error(SourceLocation{}, "cannot open the plan '" + path + "': " + error);
    return std::nullopt;
  }
  return decodeAll(path, source, diags, origin);
}

std::optional<plan::Plan> readBinaryPlanRank(const std::string &path,
                                             uint32_t rank,
                                             DiagnosticEngine &diags,
                                             PlanOrigin *origin) {
  FileSource source;
  std::string error;
  if (!source.open(path, error)) {
    diags.error(SourceLocation{}, "cannot open the plan '" + path + "': " + error);
    return std::nullopt;
  }
  Decoder decoder(path, source, diags);
  if (!decoder.header(origin))
    return std::nullopt;
  if (rank >= decoder.ranks()) {
    diags.error(SourceLocation{}, "the plan '" + path + "' has " +
                                      std::to_string(decoder.ranks()) +
                                      " ranks; there is no rank " +
                                      std::to_string(rank));
    return std::nullopt;
  }
  if (!decoder.shared() || !decoder.rank(rank))
    return std::nullopt;
  return decoder.take();
}

} // namespace binplan
} // namespace aoa
