//===- PlanDecoder.cpp - The header, directory and shared tables ----------===//
#include "PlanDecoder.h"

#include "BinaryLayout.h"

#include <iterator>

namespace aoa {
namespace binplan {

bool PlanDecoder::fail(const std::string &what, const std::string &hint) {
  std::string message = "invalid binary plan '" + path_ + "': ";
  if (!where_.empty())
    message += where_ + ": ";
  auto d = diags_.error(SourceLocation{}, message + what);
  d.hint(hint.empty() ? "the file is damaged or was not written by "
                        "aoa-compile; compile the plan again"
                      : hint);
  return false;
}

bool PlanDecoder::header(PlanOrigin *origin) {
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
                hexText(recordedHeaderSum) + ", computed " + hexText(headerSum) + ")");
  if (recordedSize != fileSize)
    return fail("the header records " + std::to_string(recordedSize) +
                " bytes, the file has " + std::to_string(fileSize) +
                (fileSize < recordedSize ? " (truncated)" : ""));
  if (flags & ~kKnownFlags)
    return fail("unknown header flags " + hexText(flags & ~kKnownFlags));
  if (reserved != 0)
    return fail("a reserved header field is not zero");
  if (plan_.ranks == 0 || plan_.ranks > kMaxRanks)
    return fail("the rank count " + std::to_string(plan_.ranks) +
                " is outside 1 to " + std::to_string(kMaxRanks));
  if (format > uint32_t(plan::DestinationFormat::HuggingFace))
    return fail("unknown destination format " + std::to_string(format));
  plan_.destinationFormat = plan::DestinationFormat(format);
  plan_.sourceAccess = flags & kSharedSourceAccess ? plan::SourceAccess::Shared
                                                   : plan::SourceAccess::Owner;
  if (uint64_t(sections) != uint64_t(kSharedSections) + plan_.ranks)
    return fail("the header lists " + std::to_string(sections) +
                " sections; " + std::to_string(plan_.ranks) + " ranks need " +
                std::to_string(uint64_t(kSharedSections) + plan_.ranks));
  if (origin) {
    *origin = PlanOrigin();
    if (flags & kHasSourceLayoutHash)
      origin->sourceLayoutHash = sourceHash;
    if (flags & kHasDestinationLayoutHash)
      origin->destinationLayoutHash = destinationHash;
    origin->headerChecksum = recordedHeaderSum;
  }
  return directory(sections, directorySum, fileSize);
}

bool PlanDecoder::directory(uint32_t sections, uint64_t directorySum,
                            uint64_t fileSize) {
  std::string storage;
  std::string_view bytes;
  std::string error;
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

bool PlanDecoder::fetch(uint64_t id, std::string &storage,
                    std::string_view &bytes) {
  where_.clear();
  const DirectoryEntry &e = directory_[id];
  std::string error;
  if (!source_.read(e.offset, e.size, storage, bytes, error))
    return fail("cannot read " + sectionName(id) + ": " + error);
  uint64_t sum = checksum(bytes.data(), bytes.size());
  if (sum != e.checksum)
    return fail(sectionName(id) + "'s checksum does not match (recorded " +
                hexText(e.checksum) + ", computed " + hexText(sum) + ")");
  where_ = sectionName(id);
  return true;
}

bool PlanDecoder::count(ByteCursor &c, uint64_t recordSize, uint64_t &n,
                    const char *what) {
  if (!c.has(8))
    return fail("ends before the count of " + std::string(what));
  n = c.u64();
  if (n > c.remaining() / recordSize)
    return fail("the count of " + std::string(what) + ", " + std::to_string(n) +
                ", is more than the section's bytes hold");
  return true;
}

bool PlanDecoder::ints(std::string_view pool, uint64_t first, uint64_t n,
                       std::vector<int64_t> &out, const std::string &what) {
  llvm::SmallVector<int64_t, 8> values;
  if (!ints(pool, first, n, values, what))
    return false;
  out.assign(values.begin(), values.end());
  return true;
}

bool PlanDecoder::ints(std::string_view pool, uint64_t first, uint64_t n,
                       llvm::SmallVectorImpl<int64_t> &out,
                       const std::string &what) {
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

bool PlanDecoder::boxFits(std::string_view pool, uint64_t first,
                          uint64_t rank) {
  uint64_t available = pool.size() / 8;
  return rank <= pool.size() / 16 && first <= available &&
         2 * rank <= available - first;
}

Box PlanDecoder::decodeBox(std::string_view pool, uint64_t first,
                           uint64_t rank) {
  ByteCursor c(pool.substr(first * 8, rank * 16));
  llvm::SmallVector<Interval, 4> dims(rank);
  for (Interval &dim : dims) {
    dim.begin = c.i64();
    dim.end = c.i64();
  }
  return Box(dims);
}

bool PlanDecoder::box(std::string_view pool, uint64_t first, uint64_t rank,
                  Box &out, const std::string &what) {
  if (rank > pool.size() / 16)
    return fail(what + ": box rank " + std::to_string(rank) +
                " is more than the section holds");
  llvm::SmallVector<int64_t, 8> values;
  if (!ints(pool, first, 2 * rank, values, what)) // says why
    return false;
  out = decodeBox(pool, first, rank);
  return true;
}

bool PlanDecoder::knownDType(uint8_t code) {
  return code < std::size(kAllDTypes);
}

bool PlanDecoder::string(uint32_t index, std::string &out,
                         const std::string &what) {
  SharedString shared;
  if (!string(index, shared, what))
    return false;
  out = shared.str();
  return true;
}

bool PlanDecoder::string(uint32_t index, SharedString &out,
                         const std::string &what) {
  if (index >= strings_.size())
    return fail(what + " refers to string " + std::to_string(index) +
                ", but the string table has " +
                std::to_string(strings_.size()));
  out = strings_[index];
  return true;
}

bool PlanDecoder::dtype(uint8_t code, DType &out, const std::string &what) {
  if (!knownDType(code))
    return fail(what + " has an unknown dtype code " + std::to_string(code));
  out = DType(code);
  return true;
}

bool PlanDecoder::strings(std::string_view bytes) {
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

bool PlanDecoder::files(std::string_view bytes) {
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

bool PlanDecoder::tensors(std::string_view bytes) {
  ByteCursor c(bytes);
  if (!c.has(48))
    return fail("ends before the tensor counts");
  uint64_t sources = c.u64(), destinations = c.u64(), shapeCount = c.u64(),
           boxCount = c.u64(), rangeCount = c.u64(), intCount = c.u64();
  // Every record is a multiple of 8 bytes: the counts must use the
  // section's bytes exactly, checked before anything is allocated.
  uint64_t left = c.remaining() / 8;
  auto take = [&left](uint64_t count, uint64_t recordSize) {
    if (count > left / (recordSize / 8))
      return false;
    left -= count * (recordSize / 8);
    return true;
  };
  if (c.remaining() % 8 || !take(sources, kTensorRecordSize) ||
      !take(destinations, kTensorRecordSize) ||
      !take(shapeCount, kShapeRecordSize) || !take(boxCount, kBoxRecordSize) ||
      !take(rangeCount, kRangeRecordSize) || left != intCount)
    return fail("the tensor, shape, box, range and integer counts do not "
                "match the section's size");
  ByteCursor records(c.take((sources + destinations) * kTensorRecordSize));
  ByteCursor shapeRecords(c.take(shapeCount * kShapeRecordSize));
  ByteCursor boxRecords(c.take(boxCount * kBoxRecordSize));
  ByteCursor rangeRecords(c.take(rangeCount * kRangeRecordSize));
  std::string_view pool = c.take(intCount * 8);

  std::vector<SharedShape> shapes(shapeCount);
  for (uint64_t i = 0; i < shapeCount; ++i) {
    uint32_t rank = shapeRecords.u32(), reserved = shapeRecords.u32();
    uint64_t first = shapeRecords.u64();
    std::string what = "shape " + std::to_string(i);
    llvm::SmallVector<int64_t, 4> extents;
    if (reserved)
      return fail(what + " has a reserved field that is not zero");
    if (!ints(pool, first, rank, extents, what))
      return false;
    shapes[i] = SharedShape(extents);
  }
  std::vector<Box> boxes(boxCount);
  for (uint64_t i = 0; i < boxCount; ++i) {
    uint32_t rank = boxRecords.u32(), reserved = boxRecords.u32();
    uint64_t first = boxRecords.u64();
    std::string what = "box " + std::to_string(i);
    if (reserved)
      return fail(what + " has a reserved field that is not zero");
    if (!box(pool, first, rank, boxes[i], what))
      return false;
  }

  plan_.sourceTensors.resize(sources);
  plan_.destinationTensors.resize(destinations);
  uint64_t ranges = 0;
  for (uint64_t i = 0; i < sources + destinations; ++i) {
    bool source = i < sources;
    plan::StoredTensor &t = source ? plan_.sourceTensors[i]
                                   : plan_.destinationTensors[i - sources];
    // Named only when something is wrong: a plan has millions of tensors.
    auto what = [&] {
      return std::string(source ? "source" : "destination") + " tensor " +
             std::to_string(source ? i : i - sources);
    };
    t.file = records.u32();
    uint32_t name = records.u32(), key = records.u32(),
             shape = records.u32(), box = records.u32();
    uint8_t code = records.u8(), flags = records.u8();
    uint16_t reserved = records.u16();
    if (name >= strings_.size() || key >= strings_.size() || !knownDType(code))
      return string(name, t.name, what() + "'s name") &&
             string(key, t.key, what() + "'s key") &&
             dtype(code, t.dtype, what());
    t.name = strings_[name];
    t.key = strings_[key];
    t.dtype = DType(code);
    uint64_t filesOfSide =
        source ? plan_.sourceFiles.size() : plan_.destinationFiles.size();
    if (t.file >= filesOfSide)
      return fail(what() + " refers to file " + std::to_string(t.file) +
                  ", but there are " + std::to_string(filesOfSide));
    if ((flags & ~(kTensorHasFlat | kTensorHasData)) || reserved)
      return fail(what() + " has unknown flags");
    if (shape >= shapeCount)
      return fail(what() + " refers to shape " + std::to_string(shape) +
                  ", but there are " + std::to_string(shapeCount));
    if (box >= boxCount)
      return fail(what() + " refers to box " + std::to_string(box) +
                  ", but there are " + std::to_string(boxCount));
    t.globalShape = shapes[shape];
    t.box = boxes[box];
    if (!flags)
      continue;
    if (ranges == rangeCount)
      return fail(what() + " has a flat range or data offsets, but the "
                  "table holds only " + std::to_string(rangeCount));
    ++ranges;
    int64_t flatBegin = rangeRecords.i64(), flatEnd = rangeRecords.i64();
    uint64_t dataBegin = rangeRecords.u64(), dataEnd = rangeRecords.u64();
    FlatElementRange flat{flatBegin, flatEnd};
    plan::ByteRange data{dataBegin, dataEnd};
    // The values that stand for none in memory (plan::StoredTensor) are
    // refused as present ones: no tensor stores them.
    if ((flags & kTensorHasFlat) && flat == PackedNone<FlatElementRange>::value())
      return fail(what() + " has the flat range [" + std::to_string(flatBegin) +
                  ":" + std::to_string(flatEnd) + "], which no tensor stores");
    if ((flags & kTensorHasData) && data == PackedNone<plan::ByteRange>::value())
      return fail(what() + " has the data offsets [" +
                  std::to_string(dataBegin) + ":" + std::to_string(dataEnd) +
                  "], which no file holds");
    if (flags & kTensorHasFlat)
      t.flat = flat;
    else if (flatBegin || flatEnd)
      return fail(what() + " has a flat range without its flag");
    if (flags & kTensorHasData)
      t.data = data;
    else if (dataBegin || dataEnd)
      return fail(what() + " has data offsets without their flag");
  }
  if (ranges != rangeCount)
    return fail("the table holds " + std::to_string(rangeCount) +
                " flat ranges and data offsets, but " + std::to_string(ranges) +
                " tensors flag one");
  return true;
}

bool PlanDecoder::transforms(std::string_view bytes) {
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
    list.planId = plan_.transforms.intern(std::vector<plan::TransformStep>(
        steps_.begin() + list.first, steps_.begin() + list.first + list.count));
  }
  return true;
}

bool PlanDecoder::lists(std::string_view bytes) {
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

bool PlanDecoder::shared() {
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

bool PlanDecoder::rank(uint32_t r) {
  std::string storage;
  std::string_view bytes;
  return fetch(kSharedSections + uint64_t(r), storage, bytes) &&
         program(r, bytes);
}

} // namespace binplan
} // namespace aoa
