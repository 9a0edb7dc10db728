//===- BinaryPlanWriter.cpp - Plan -> binary container --------------------===//
//
// Sections are built into byte strings, the ranks' in batches on several
// threads. Into a file they stream behind a header of zeros, which is
// written over last with the directory's sizes and checksums; otherwise the
// whole plan is built first. Everything written is a pure function of the
// plan and origin: strings and transform lists are numbered in the order the
// plan first mentions them, padding is zero, and the thread count changes
// nothing.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/BinaryPlan.h"

#include "BinaryLayout.h"
#include "ByteCoding.h"

#include "aoa/ir/ShardMetadata.h"
#include "aoa/runtime/support/ThreadPool.h"

#include <algorithm>
#include <optional>
#include <ostream>
#include <unordered_map>
#include <vector>

namespace aoa {
namespace binplan {

namespace {

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
    auto [it, inserted] =
        offsets_.emplace(checksum(bytes.data(), bytes.size()), count());
    if (!inserted && it->second * 8 + bytes.size() <= ints_.size() &&
        std::string_view(ints_.bytes()).substr(it->second * 8, bytes.size()) ==
            bytes)
      return it->second;
    uint64_t offset = count();
    ints_.raw(bytes);
    return offset;
  }
  uint64_t count() const { return ints_.size() / 8; }
  const std::string &bytes() const { return ints_.bytes(); }

private:
  /// The hash of a sequence -> the offset of its first copy.
  std::unordered_map<uint64_t, uint64_t> offsets_;
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

std::string encodeTensors(const plan::Plan &plan, StringTable &strings) {
  // The records, then the integers they point into, written straight into
  // one writer in two passes: the table of a large plan is hundreds of MB,
  // so no part of it is built twice.
  ByteWriter w;
  w.u64(plan.sourceTensors.size());
  w.u64(plan.destinationTensors.size());
  uint64_t intCount = 0;
  for (const auto *tensors : {&plan.sourceTensors, &plan.destinationTensors})
    for (const plan::StoredTensor &t : *tensors)
      intCount += t.globalShape.size() + 2 * t.box.rank();
  w.u64(intCount);
  intCount = 0;
  for (const auto *tensors : {&plan.sourceTensors, &plan.destinationTensors})
    for (const plan::StoredTensor &t : *tensors) {
      w.u32(t.file);
      w.u32(strings.intern(t.name));
      w.u32(strings.intern(t.key));
      w.u32(uint32_t(t.globalShape.size()));
      w.u8(uint8_t(t.dtype));
      w.u8((t.flat ? kTensorHasFlat : 0) | (t.data ? kTensorHasData : 0));
      w.u16(0);
      w.u32(uint32_t(t.box.rank()));
      w.u64(intCount);
      w.i64(t.flat ? t.flat->begin : 0);
      w.i64(t.flat ? t.flat->end : 0);
      w.u64(t.data ? t.data->begin : 0);
      w.u64(t.data ? t.data->end : 0);
      intCount += t.globalShape.size() + 2 * t.box.rank();
    }
  for (const auto *tensors : {&plan.sourceTensors, &plan.destinationTensors})
    for (const plan::StoredTensor &t : *tensors) {
      for (int64_t extent : t.globalShape)
        w.i64(extent);
      boxInts(w, t.box);
    }
  return w.take();
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
      ByteWriter &region = scratch;
      region.clear();
      boxInts(region, in.region);
      instructions.u8(uint8_t(in.opcode));
      instructions.u8(0);
      instructions.u16(0);
      instructions.u32(in.buffer);
      instructions.u32(in.input);
      instructions.u32(in.tensor);
      instructions.u32(in.peer);
      instructions.u32(transforms.find(in.transform));
      instructions.u32(uint32_t(in.region.rank()));
      instructions.u32(uint32_t(in.buffers.size()));
      instructions.u64(ints.add(region));
      instructions.u64(listCount);
      for (uint32_t id : in.buffers)
        lists.u32(id);
      listCount += in.buffers.size();
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

/// Encodes a plan's sections: the shared tables once, the ranks' programs
/// in batches on a thread pool, so that a writer can stream them.
class PlanEncoder {
public:
  PlanEncoder(const plan::Plan &plan, unsigned threads)
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
  /// How many ranks to encode together: enough to keep the threads busy,
  /// few enough that their bytes stay small beside the plan.
  size_t batchSize() const { return 4 * size_t(pool_.threadCount()); }

  /// The shared sections (in section order) and the ranks' sections
  /// [firstRank, firstRank + count), encoded at once; `alongside`, if
  /// given, runs as one more task (a writer of the previous batch).
  void encode(bool shared, size_t firstRank, size_t count,
              std::vector<EncodedSection> &sharedOut,
              std::vector<EncodedSection> &ranksOut,
              llvm::function_ref<void()> alongside = nullptr) {
    ranksOut.assign(count, EncodedSection());
    if (shared)
      sharedOut.assign(kSharedSections, EncodedSection());
    size_t extra = alongside ? 1 : 0;
    size_t tasks = extra + count + (shared ? 1 : 0);
    runtime::Status encoded = pool_.parallelFor(tasks, [&](size_t task) {
      if (task < extra) {
        alongside();
        return runtime::Status();
      }
      task -= extra;
      if (shared && task == 0) {
        StringTable strings;
        sharedOut[kFiles] = sealed(encodeFiles(plan_, strings));
        sharedOut[kTensors] = sealed(encodeTensors(plan_, strings));
        sharedOut[kLists] = sealed(encodeLists(plan_, strings));
        sharedOut[kStrings] = sealed(strings.encode());
        sharedOut[kTransforms] = sealed(transforms_.encode());
      } else {
        size_t i = task - (shared ? 1 : 0);
        ranksOut[i] = sealed(
            encodeRank(plan_, plan_.programs[firstRank + i], transforms_));
      }
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
/// writes the header and directory over it: only two batches of ranks'
/// bytes are held at a time, one being written while the next is encoded.
/// `os` must be seekable.
bool streamBinaryPlan(const plan::Plan &plan, const PlanOrigin &origin,
                      std::ostream &os, unsigned threads) {
  PlanEncoder encoder(plan, threads);
  std::streampos start = os.tellp();
  os.write(
      std::string(headerAndDirectorySize(encoder.sectionCount()), '\0').data(),
      std::streamsize(headerAndDirectorySize(encoder.sectionCount())));
  std::vector<SectionEntry> entries;
  std::vector<EncodedSection> shared, ranks, encoded;
  auto writeEncoded = [&] {
    for (const EncodedSection &section : encoded)
      os.write(section.bytes.data(), std::streamsize(section.bytes.size()));
  };
  size_t batch = encoder.batchSize();
  for (size_t first = 0; first == 0 || first < plan.programs.size();
       first += batch) {
    size_t count = std::min(batch, plan.programs.size() - first);
    encoder.encode(first == 0, first, count, shared, ranks,
                   encoded.empty() ? nullptr
                                   : llvm::function_ref<void()>(writeEncoded));
    encoded.clear();
    for (std::vector<EncodedSection> *sections : {&shared, &ranks}) {
      for (EncodedSection &section : *sections) {
        entries.push_back(section.entry);
        encoded.push_back(std::move(section));
      }
      sections->clear();
    }
  }
  writeEncoded();
  std::streampos end = os.tellp();
  std::string header = headerAndDirectory(plan, origin, entries);
  os.seekp(start);
  os.write(header.data(), std::streamsize(header.size()));
  os.seekp(end);
  return bool(os);
}

} // namespace

std::string encodeBinaryPlan(const plan::Plan &plan, const PlanOrigin &origin,
                             unsigned threads) {
  PlanEncoder encoder(plan, threads);
  std::vector<EncodedSection> shared, ranks;
  encoder.encode(true, 0, plan.programs.size(), shared, ranks);
  std::vector<SectionEntry> entries;
  for (const auto *sections : {&shared, &ranks})
    for (const EncodedSection &section : *sections)
      entries.push_back(section.entry);
  std::string bytes = headerAndDirectory(plan, origin, entries);
  for (const auto *sections : {&shared, &ranks})
    for (const EncodedSection &section : *sections)
      bytes += section.bytes;
  return bytes;
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
