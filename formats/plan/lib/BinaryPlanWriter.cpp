//===- BinaryPlanWriter.cpp - Plan -> binary container --------------------===//
//
// Sections stream into the output behind a header of zeros, which is
// written over last with the directory's sizes and checksums: the ranks'
// sections are built into byte strings in batches on several threads, the
// tensor table a piece at a time (a pipe, which cannot seek, gets the plan
// built whole first). Everything written is a pure function of the plan and
// origin: strings and transform lists are numbered in the order the plan
// first mentions them, padding is zero, and the thread count changes
// nothing.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/BinaryPlan.h"

#include "BinaryLayout.h"
#include "ByteCoding.h"

#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/ThreadPool.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <optional>
#include <ostream>
#include <sstream>
#include <type_traits>
#include <vector>

namespace aoa {
namespace binplan {

namespace {

/// A hash as a key of llvm::DenseMap<uint64_t, ...>, which keeps the two
/// largest values for itself: they become the one below them (two hashes
/// that fall together are told apart by comparing what they hash).
uint64_t denseMapKey(uint64_t hash) { return std::min(hash, ~uint64_t(0) - 2); }

/// Every distinct string once, numbered by first use.
class StringTable {
public:
  uint32_t intern(std::string_view s) { return pool_.intern(s); }
  std::string encode() const {
    ByteWriter w;
    w.u64(pool_.size());
    uint64_t end = 0;
    for (uint32_t id = 0; id < pool_.size(); ++id)
      end += pool_.get(id).size();
    w.u64(end);
    end = 0;
    for (uint32_t id = 0; id < pool_.size(); ++id)
      w.u64(end += pool_.get(id).size());
    for (uint32_t id = 0; id < pool_.size(); ++id)
      w.raw(pool_.get(id));
    w.padTo8();
    return w.take();
  }

private:
  StringPool pool_;
};

/// The plan's transform lists that its instructions use, each once, numbered
/// by first use. A list is known by its id in Plan::transforms, which holds
/// each distinct list once.
class TransformTable {
public:
  explicit TransformTable(const plan::Plan &plan)
      : plan_(plan), idOfPlanId_(plan.transforms.size(), kUnused) {}

  void use(uint32_t planId) {
    if (idOfPlanId_[planId] != kUnused)
      return;
    idOfPlanId_[planId] = uint32_t(usedPlanIds_.size());
    usedPlanIds_.push_back(planId);
  }
  /// The number of a list use() has seen; threads may look lists up at once.
  uint32_t find(uint32_t planId) const { return idOfPlanId_[planId]; }

  std::string encode() const {
    ByteWriter lists, steps, ints;
    uint64_t stepCount = 0, intCount = 0;
    for (uint32_t planId : usedPlanIds_) {
      const std::vector<plan::TransformStep> &list = plan_.transforms[planId];
      lists.u32(uint32_t(stepCount));
      lists.u32(uint32_t(list.size()));
      for (const plan::TransformStep &step : list) {
        steps.u8(uint8_t(step.kind));
        steps.u8(uint8_t(step.dtype));
        steps.u16(0);
        steps.u32(uint32_t(step.permutation.rank()));
        steps.u32(uint32_t(step.canonical.size()));
        steps.u32(0);
        steps.u64(intCount);
        for (unsigned axis : step.permutation.axes())
          ints.i64(axis);
        for (int64_t v : step.canonical)
          ints.i64(v);
        intCount += step.permutation.rank() + step.canonical.size();
        ++stepCount;
      }
    }
    ByteWriter w;
    w.u64(usedPlanIds_.size());
    w.u64(stepCount);
    w.u64(intCount);
    w.raw(lists.bytes());
    w.raw(steps.bytes());
    w.raw(ints.bytes());
    w.padTo8();
    return w.take();
  }

private:
  static constexpr uint32_t kUnused = UINT32_MAX;
  const plan::Plan &plan_;
  std::vector<uint32_t> idOfPlanId_;
  std::vector<uint32_t> usedPlanIds_; ///< by number
};

/// A rank's int64 array: each distinct sequence (a shape, a region's
/// begin/end pairs) is stored once, at the offset of its first use; most
/// buffers have the shape and most writes the region of another instruction.
class IntPool {
public:
  uint64_t add(const ByteWriter &sequence) {
    std::string_view bytes = sequence.bytes();
    if (bytes.empty())
      return 0;
    // Sequences are found by their hash and compared with the pool's copy,
    // so no key is stored twice. On a (rare) collision with different
    // bytes the sequence is stored again: only sharing is lost.
    auto [it, inserted] = offsets_.try_emplace(
        denseMapKey(checksum(bytes.data(), bytes.size())), count());
    if (!inserted && it->second * 8 + bytes.size() <= ints_.size() &&
        std::string_view(ints_.bytes()).substr(it->second * 8, bytes.size()) ==
            bytes)
      return it->second;
    uint64_t offset = count();
    ints_.raw(bytes);
    return offset;
  }
  uint64_t count() const { return ints_.size() / 8; }
  std::string_view bytes() const { return ints_.bytes(); }

private:
  /// The hash of a sequence -> the offset of its first copy.
  llvm::DenseMap<uint64_t, uint64_t> offsets_;
  ByteWriter ints_;
};

void boxInts(ByteWriter &ints, const Box &box) {
  for (const Interval &dim : box.dims()) {
    ints.i64(dim.begin);
    ints.i64(dim.end);
  }
}

std::string encodeFiles(const plan::Plan &plan, StringTable &strings) {
  ByteWriter w;
  w.u64(plan.sourceFiles.size());
  w.u64(plan.destinationFiles.size());
  for (const auto *files : {&plan.sourceFiles, &plan.destinationFiles})
    for (const plan::File &file : *files) {
      w.u32(strings.intern(file.path));
      w.u32(file.rank);
      w.u32(file.size ? kFileHasSize : 0);
      w.u32(0);
      w.u64(file.size.value_or(0));
    }
  return w.take();
}

/// The string ids of every stored tensor's name and key (two per tensor,
/// sources then destinations), interned in plan order.
std::vector<uint32_t> internTensorStrings(const plan::Plan &plan,
                                          StringTable &strings) {
  std::vector<uint32_t> ids;
  ids.reserve(2 * (plan.sourceTensors.size() + plan.destinationTensors.size()));
  // The tensors of a plan share their keys' and names' texts: a text seen
  // before is found by its address, and only a new one is hashed.
  llvm::DenseMap<const char *, uint32_t> idOfText;
  auto intern = [&](const SharedString &text) {
    auto [it, inserted] = idOfText.try_emplace(text.data(), 0);
    if (inserted)
      it->second = strings.intern(text);
    return it->second;
  };
  for (const auto *tensors : {&plan.sourceTensors, &plan.destinationTensors})
    for (const plan::StoredTensor &t : *tensors) {
      ids.push_back(intern(t.name));
      ids.push_back(intern(t.key));
    }
  return ids;
}

/// The tensor table's shapes and boxes, each distinct one stored once and
/// numbered by first use in tensor order: the shards of a key share its
/// shape, and the keys of a model's layers the few boxes of its layout.
class TensorGeometry {
public:
  explicit TensorGeometry(const plan::Plan &plan) {
    size_t tensors = plan.sourceTensors.size() + plan.destinationTensors.size();
    ids_.reserve(tensors);
    const SharedShape *previous = nullptr;
    uint32_t previousShape = 0;
    for (const auto *side : {&plan.sourceTensors, &plan.destinationTensors})
      for (const plan::StoredTensor &t : *side) {
        // Consecutive shards of a key share one shape list: no hashing.
        if (!previous || !t.globalShape.sharesWith(*previous))
          previousShape = intern(shapeIds_, shapes_, t.globalShape.extents());
        previous = &t.globalShape;
        ids_.push_back({previousShape, intern(boxIds_, boxes_, t.box.dims())});
        if (t.flat || t.data)
          ++ranges_;
      }
  }

  uint64_t shapeCount() const { return shapes_.size(); }
  uint64_t boxCount() const { return boxes_.size(); }
  /// Tensors with a flat range or data offsets (one range record each).
  uint64_t rangeCount() const { return ranges_; }
  uint64_t intCount() const { return shapeInts_ + 2 * boxInts_; }
  /// The shape and box ids of tensor `index` (sources, then destinations).
  std::pair<uint32_t, uint32_t> ids(size_t index) const { return ids_[index]; }

  /// The shape and box records.
  void encodeRecords(ByteWriter &w,
                     llvm::function_ref<void()> flushIfFull) const {
    uint64_t first = 0;
    for (llvm::ArrayRef<int64_t> shape : shapes_) {
      w.u32(uint32_t(shape.size()));
      w.u32(0);
      w.u64(first);
      first += shape.size();
    }
    for (llvm::ArrayRef<Interval> box : boxes_) {
      w.u32(uint32_t(box.size()));
      w.u32(0);
      w.u64(first);
      first += 2 * box.size();
      flushIfFull();
    }
  }
  /// The integers the records point into: the shapes', then the boxes'.
  void encodeInts(ByteWriter &w,
                  llvm::function_ref<void()> flushIfFull) const {
    for (llvm::ArrayRef<int64_t> shape : shapes_)
      for (int64_t extent : shape)
        w.i64(extent);
    for (llvm::ArrayRef<Interval> box : boxes_) {
      for (const Interval &dim : box) {
        w.i64(dim.begin);
        w.i64(dim.end);
      }
      flushIfFull();
    }
  }

private:
  /// The id of `values` in `list`, added if new. Found by a hash of their
  /// bytes and compared with the first copy; the views stay valid, as the
  /// plan outlives the writer.
  template <typename T>
  uint32_t intern(llvm::DenseMap<uint64_t, uint32_t> &ids,
                  std::vector<llvm::ArrayRef<T>> &list,
                  llvm::ArrayRef<T> values) {
    uint64_t hash =
        denseMapKey(checksum(values.data(), values.size() * sizeof(T)));
    for (;; ++hash) { // a collision with other values probes the next hash
      auto [it, inserted] = ids.try_emplace(hash, uint32_t(list.size()));
      if (inserted) {
        list.push_back(values);
        (std::is_same_v<T, Interval> ? boxInts_ : shapeInts_) += values.size();
        return it->second;
      }
      if (list[it->second] == values)
        return it->second;
      if (hash == ~uint64_t(0) - 2)
        hash = 0; // wrap around below the reserved keys
    }
  }

  std::vector<std::pair<uint32_t, uint32_t>> ids_;
  llvm::DenseMap<uint64_t, uint32_t> shapeIds_, boxIds_;
  std::vector<llvm::ArrayRef<int64_t>> shapes_;
  std::vector<llvm::ArrayRef<Interval>> boxes_;
  uint64_t shapeInts_ = 0, boxInts_ = 0, ranges_ = 0;
};

/// The tensor table, handed to `out` a piece at a time: the tensor records,
/// the shape and box records, the range records, then the integers. The
/// table of a large plan is tens of MB; a piece is about a MB.
void writeTensors(const plan::Plan &plan, const std::vector<uint32_t> &stringIds,
                  llvm::function_ref<void(std::string_view)> out) {
  constexpr size_t kPieceBytes = size_t(1) << 20;
  TensorGeometry geometry(plan);
  ByteWriter w;
  w.reserve(kPieceBytes + 1024);
  auto flushIfFull = [&] {
    if (w.size() >= kPieceBytes) {
      out(w.bytes());
      w.clear();
    }
  };
  w.u64(plan.sourceTensors.size());
  w.u64(plan.destinationTensors.size());
  w.u64(geometry.shapeCount());
  w.u64(geometry.boxCount());
  w.u64(geometry.rangeCount());
  w.u64(geometry.intCount());
  size_t index = 0;
  for (const auto *tensors : {&plan.sourceTensors, &plan.destinationTensors})
    for (const plan::StoredTensor &t : *tensors) {
      auto [shape, box] = geometry.ids(index);
      w.u32(t.file);
      w.u32(stringIds[2 * index]);
      w.u32(stringIds[2 * index + 1]);
      w.u32(shape);
      w.u32(box);
      w.u8(uint8_t(t.dtype));
      w.u8((t.flat ? kTensorHasFlat : 0) | (t.data ? kTensorHasData : 0));
      w.u16(0);
      ++index;
      flushIfFull();
    }
  geometry.encodeRecords(w, flushIfFull);
  for (const auto *tensors : {&plan.sourceTensors, &plan.destinationTensors})
    for (const plan::StoredTensor &t : *tensors)
      if (t.flat || t.data) {
        w.i64(t.flat ? t.flat->begin : 0);
        w.i64(t.flat ? t.flat->end : 0);
        w.u64(t.data ? t.data->begin : 0);
        w.u64(t.data ? t.data->end : 0);
        flushIfFull();
      }
  geometry.encodeInts(w, flushIfFull);
  if (w.size() > 0)
    out(w.bytes());
}

std::string encodeLists(const plan::Plan &plan, StringTable &strings) {
  ByteWriter w;
  w.u64(plan.addedKeys.size());
  w.u64(plan.copiedFiles.size());
  for (const auto *list : {&plan.addedKeys, &plan.copiedFiles})
    for (const std::string &s : *list)
      w.u32(strings.intern(s));
  w.padTo8();
  return w.take();
}

std::string encodeRank(const plan::Plan &plan, const plan::RankProgram &program,
                       const TransformTable &transforms) {
  ByteWriter rounds, buffers, instructions, lists;
  ByteWriter scratch; ///< one shape or region at a time
  IntPool ints;
  uint64_t bufferCount = 0, instructionCount = 0, listCount = 0;
  // Sized once: a rank of a large plan has tens of thousands of records.
  for (const plan::Round &round : program.rounds) {
    bufferCount += round.buffers.size();
    instructionCount += round.instructions.size();
  }
  rounds.reserve(kRoundRecordSize * program.rounds.size());
  buffers.reserve(kBufferRecordSize * bufferCount);
  instructions.reserve(kInstructionRecordSize * instructionCount);
  bufferCount = instructionCount = 0;
  for (const plan::Round &round : program.rounds) {
    rounds.u32(uint32_t(round.buffers.size()));
    rounds.u32(uint32_t(round.instructions.size()));
    for (const plan::BufferDecl &buffer : round.buffers) {
      ByteWriter &shape = scratch;
      shape.clear();
      for (int64_t extent : buffer.shape)
        shape.i64(extent);
      buffers.u8(uint8_t(buffer.dtype));
      buffers.u8(0);
      buffers.u16(0);
      buffers.u32(uint32_t(buffer.shape.size()));
      buffers.u64(ints.add(shape));
    }
    bufferCount += round.buffers.size();
    for (const plan::Instruction &in : round.instructions) {
      // One 24-byte record, its fields by opcode (docs/plan-format.md).
      InstructionRecord record{uint8_t(in.opcode)};
      switch (in.opcode) {
      case plan::Opcode::Read:
      case plan::Opcode::Write: {
        ByteWriter &region = scratch;
        region.clear();
        boxInts(region, in.region);
        record.regionRank = uint8_t(in.region.rank());
        record.a = in.buffer;
        record.b = in.tensor;
        record.d = ints.add(region);
        break;
      }
      case plan::Opcode::Copy:
        record.a = in.buffer;
        record.b = in.input;
        record.c = transforms.find(in.transform);
        break;
      case plan::Opcode::Send:
      case plan::Opcode::Recv:
        record.a = in.peer;
        record.b = uint32_t(in.buffers.size());
        record.d = listCount;
        for (uint32_t id : in.buffers)
          lists.u32(id);
        listCount += in.buffers.size();
        break;
      }
      instructions.u8(record.opcode);
      instructions.u8(record.regionRank);
      instructions.u16(0);
      instructions.u32(record.a);
      instructions.u32(record.b);
      instructions.u32(record.c);
      instructions.u64(record.d);
    }
    instructionCount += round.instructions.size();
  }
  ByteWriter w;
  w.u64(program.rounds.size());
  w.u64(bufferCount);
  w.u64(instructionCount);
  w.u64(listCount);
  w.u64(ints.count());
  w.raw(rounds.bytes());
  w.raw(buffers.bytes());
  w.raw(instructions.bytes());
  w.raw(lists.bytes());
  w.padTo8();
  w.raw(ints.bytes());
  return w.take();
}

} // namespace

namespace {

/// A section's directory entry, without its offset.
struct SectionEntry {
  uint64_t size = 0;
  uint64_t checksum = 0;
};

/// A section's bytes and its entry.
struct EncodedSection {
  std::string bytes;
  SectionEntry entry;
};

EncodedSection sealed(std::string bytes) {
  SectionEntry entry{bytes.size(), checksum(bytes.data(), bytes.size())};
  return {std::move(bytes), entry};
}

/// Writes sections into a stream one after another, each whole or in
/// pieces, and keeps their directory entries.
class SectionWriter {
public:
  explicit SectionWriter(std::ostream &os) : os_(os) {}

  void write(const EncodedSection &section) {
    os_.write(section.bytes.data(), std::streamsize(section.bytes.size()));
    entries_.push_back(section.entry);
  }
  /// A section that `produce` hands over a piece at a time.
  void
  stream(llvm::function_ref<void(llvm::function_ref<void(std::string_view)>)>
             produce) {
    StreamingChecksum sum;
    uint64_t size = 0;
    produce([&](std::string_view piece) {
      os_.write(piece.data(), std::streamsize(piece.size()));
      sum.update(piece);
      size += piece.size();
    });
    entries_.push_back(SectionEntry{size, sum.digest()});
  }
  const std::vector<SectionEntry> &entries() const { return entries_; }

private:
  std::ostream &os_;
  std::vector<SectionEntry> entries_;
};

/// Writes the shared sections, in section order. The strings come first in
/// the file but are numbered by the tables after them, so the tensors'
/// strings are interned before anything is written, and the tensor table,
/// the largest section, is streamed.
void writeSharedSections(const plan::Plan &plan,
                         const TransformTable &transforms,
                         SectionWriter &out) {
  StringTable strings;
  EncodedSection files = sealed(encodeFiles(plan, strings));
  std::vector<uint32_t> tensorStrings = internTensorStrings(plan, strings);
  EncodedSection lists = sealed(encodeLists(plan, strings));
  out.write(sealed(strings.encode()));
  out.write(files);
  out.stream([&](llvm::function_ref<void(std::string_view)> piece) {
    writeTensors(plan, tensorStrings, piece);
  });
  out.write(sealed(transforms.encode()));
  out.write(lists);
}

/// Encodes the ranks' programs in batches on a thread pool, so that a
/// writer can stream them.
class RankEncoder {
public:
  RankEncoder(const plan::Plan &plan, unsigned threads)
      : plan_(plan), pool_(threads), transforms_(plan) {
    // Transform lists are numbered in the order the ranks first use them,
    // before any rank is encoded, so ranks can be encoded at once.
    for (const plan::RankProgram &program : plan.programs)
      for (const plan::Round &round : program.rounds)
        for (const plan::Instruction &in : round.instructions)
          transforms_.use(in.transform);
  }

  size_t sectionCount() const {
    return kSharedSections + plan_.programs.size();
  }
  const TransformTable &transforms() const { return transforms_; }
  /// How many ranks to encode together: enough to keep the threads busy,
  /// few enough that their bytes stay small beside the plan.
  size_t batchSize() const { return 4 * size_t(pool_.threadCount()); }

  /// The ranks' sections [firstRank, firstRank + count), encoded at once;
  /// `alongside`, if given, runs as one more task (the writer of what came
  /// before).
  void encode(size_t firstRank, size_t count,
              std::vector<EncodedSection> &ranksOut,
              llvm::function_ref<void()> alongside = nullptr) {
    ranksOut.assign(count, EncodedSection());
    size_t extra = alongside ? 1 : 0;
    runtime::Status encoded =
        pool_.parallelFor(extra + count, [&](size_t task) {
          if (task < extra) {
            alongside();
            return runtime::Status();
          }
          size_t i = task - extra;
          ranksOut[i] = sealed(
              encodeRank(plan_, plan_.programs[firstRank + i], transforms_));
          return runtime::Status();
        });
    (void)encoded; // no task fails
  }

private:
  const plan::Plan &plan_;
  runtime::ThreadPool pool_;
  TransformTable transforms_;
};

uint64_t headerAndDirectorySize(size_t sections) {
  return kHeaderSize + sections * kDirectoryEntrySize;
}

std::string headerAndDirectory(const plan::Plan &plan, const PlanOrigin &origin,
                               const std::vector<SectionEntry> &sections) {
  uint64_t offset = headerAndDirectorySize(sections.size());
  ByteWriter directory;
  for (const SectionEntry &section : sections) {
    directory.u64(offset);
    directory.u64(section.size);
    directory.u64(section.checksum);
    offset += section.size;
  }
  ByteWriter w;
  w.raw(std::string_view(kMagic, sizeof(kMagic)));
  w.u32(kVersion);
  w.u32((origin.sourceLayoutHash ? kHasSourceLayoutHash : 0) |
        (origin.destinationLayoutHash ? kHasDestinationLayoutHash : 0) |
        (plan.sourceAccess == plan::SourceAccess::Shared ? kSharedSourceAccess
                                                         : 0));
  // The plan model holds the program count; the verifier checks it equals
  // `ranks`, which the header records as it is.
  w.u32(plan.ranks);
  w.u32(uint32_t(plan.destinationFormat));
  w.i64(plan.memoryBudget);
  w.u64(origin.sourceLayoutHash.value_or(0));
  w.u64(origin.destinationLayoutHash.value_or(0));
  w.u32(uint32_t(sections.size()));
  w.u32(0);
  w.u64(offset);
  w.u64(checksum(directory.bytes().data(), directory.size()));
  w.u64(checksum(w.bytes().data(), w.size()));
  w.raw(directory.bytes());
  return w.take();
}

/// Streams the sections as they are encoded behind a header of zeros, then
/// writes the header and directory over it: the shared sections are written
/// while the first batch of ranks is encoded, each batch while the next one
/// is, so only two batches of ranks' bytes and a piece of the tensor table
/// are held at a time. `os` must be seekable.
bool streamBinaryPlan(const plan::Plan &plan, const PlanOrigin &origin,
                      std::ostream &os, unsigned threads) {
  RankEncoder encoder(plan, threads);
  std::streampos start = os.tellp();
  os.write(
      std::string(headerAndDirectorySize(encoder.sectionCount()), '\0').data(),
      std::streamsize(headerAndDirectorySize(encoder.sectionCount())));
  SectionWriter out(os);
  std::vector<EncodedSection> ranks, encoded;
  auto writeShared = [&] {
    writeSharedSections(plan, encoder.transforms(), out);
  };
  auto writeEncoded = [&] {
    for (const EncodedSection &section : encoded)
      out.write(section);
  };
  size_t batch = encoder.batchSize();
  for (size_t first = 0; first == 0 || first < plan.programs.size();
       first += batch) {
    size_t count = std::min(batch, plan.programs.size() - first);
    encoder.encode(first, count, ranks,
                   first == 0 ? llvm::function_ref<void()>(writeShared)
                              : llvm::function_ref<void()>(writeEncoded));
    encoded = std::move(ranks);
    ranks.clear();
  }
  writeEncoded();
  std::streampos end = os.tellp();
  std::string header = headerAndDirectory(plan, origin, out.entries());
  os.seekp(start);
  os.write(header.data(), std::streamsize(header.size()));
  os.seekp(end);
  return bool(os);
}

} // namespace

std::string encodeBinaryPlan(const plan::Plan &plan, const PlanOrigin &origin,
                             unsigned threads) {
  std::ostringstream bytes;
  streamBinaryPlan(plan, origin, bytes, threads);
  return bytes.str();
}

bool writeBinaryPlan(const plan::Plan &plan, const PlanOrigin &origin,
                     std::ostream &os, unsigned threads) {
  // A file is streamed; a pipe, which cannot seek back to the header, gets
  // the plan encoded whole first.
  if (os.tellp() != std::streampos(-1))
    return streamBinaryPlan(plan, origin, os, threads);
  std::string bytes = encodeBinaryPlan(plan, origin, threads);
  os.write(bytes.data(), std::streamsize(bytes.size()));
  return bool(os);
}

} // namespace binplan
} // namespace aoa
