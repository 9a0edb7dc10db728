//===- Plan.h - The transfer program ----------------------------*- C++ -*-===//
//
// The compiler's product and the runtime's only input (docs/plan-format.md): the
// files and stored tensors a conversion touches, and for every rank an
// ordered program of rounds. docs/plan-format.md specifies the text form.
//
// Coordinates. A region is a Box in the global coordinates of a checkpoint
// key (the key's whole tensor), never in a shard's local frame: a stored
// tensor knows which box of its key it holds and, for a flattened shard, which
// elements of that box's row-major flattening it stores, so the runtime finds
// the bytes of any region inside it. Buffers are dense row-major arrays of one
// region.
//
// Rounds. Within a round a rank first reads, then exchanges (all its sends
// and receives of the round are posted together, and every receive has its
// send in the same round, so no round can deadlock), then transforms, then
// writes. Buffers live for one round; a round's buffers on a rank fit the
// plan's memory budget (unless one indivisible transfer is larger, which the
// summary reports).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_PLAN_H
#define AOA_IR_PLAN_H

#include "aoa/ir/Box.h"
#include "aoa/ir/DType.h"
#include "aoa/ir/PackedOptional.h"
#include "aoa/ir/Permutation.h"
#include "aoa/ir/SharedShape.h"
#include "aoa/ir/SharedString.h"
#include "aoa/ir/ShardMetadata.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace aoa {
namespace plan {

/// Version 2 added `destination-format` and `copy-file`; version 3 the
/// `size` of source files and the `data` offsets of source tensors. Readers
/// also accept earlier versions, which have none of them.
constexpr int kFormatVersion = 3;
constexpr int kOldestFormatVersion = 1;

/// The index file of a Hugging Face directory with several safetensors files.
inline constexpr const char *kHuggingFaceIndexName =
    "model.safetensors.index.json";

struct File {
  std::string path; ///< relative to --src-dir or --dst-dir
  /// The rank that writes it (destination) or reads it (source; with
  /// SourceAccess::Shared, the rank the metadata gives it, while any rank
  /// may read it).
  uint32_t rank = 0;
  /// A source file's size in bytes when the plan was compiled, when the
  /// compiler read the file (--src DIR); a run refuses a file of another
  /// size. Never set for destination files.
  std::optional<uint64_t> size;
};

/// Bytes [begin, end).
struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  friend bool operator==(const ByteRange &a, const ByteRange &b) {
    return a.begin == b.begin && a.end == b.end;
  }
  friend bool operator!=(const ByteRange &a, const ByteRange &b) {
    return !(a == b);
  }
};

} // namespace plan

/// No flat range starts before element 0, nor any data at the last byte
/// offset: these stand for none in a plan::StoredTensor.
template <> struct PackedNone<FlatElementRange> {
  static FlatElementRange value() {
    return {std::numeric_limits<int64_t>::min(),
            std::numeric_limits<int64_t>::min()};
  }
};
template <> struct PackedNone<plan::ByteRange> {
  static plan::ByteRange value() {
    return {std::numeric_limits<uint64_t>::max(),
            std::numeric_limits<uint64_t>::max()};
  }
};

namespace plan {

/// A tensor stored in a safetensors file.
struct StoredTensor {
  uint32_t file = 0;  ///< into Plan::sourceFiles or Plan::destinationFiles
  DType dtype = DType::F32;
  /// Shared: a plan repeats each key and name over many shards.
  SharedString name; ///< its name inside the file
  SharedString key;  ///< the checkpoint key it is a shard of
  /// Of the key: shared by its shards (a plan stores millions of tensors).
  SharedShape globalShape;
  Box box;                          ///< the region of the key it holds
  /// Stored 1-D: elements [begin, end) of the row-major flattening of `box`.
  /// (Packed, as `data`: none is a range no tensor stores, PackedNone.)
  PackedOptional<FlatElementRange> flat;
  /// A source tensor's data_offsets in its file's safetensors header (from
  /// the start of the data section) when the plan was compiled, when the
  /// compiler read the file (see File::size). Never set for destinations.
  PackedOptional<ByteRange> data;

  /// The shape stored in the file: box.shape(), or [end - begin].
  std::vector<int64_t> storedShape() const;
  int64_t storedElements() const;
};

/// One step of a transform, applied in order (Paddle's postprocess list).
struct TransformStep {
  enum class Kind { Permute, Cast, Reshape, Flatten };
  Kind kind = Kind::Permute;
  Permutation permutation;        ///< Permute
  DType dtype = DType::F32;        ///< Cast
  std::vector<int64_t> canonical; ///< Reshape, Flatten
  /// Paddle's spelling: "[1, 0]", "float16", "reshape:[4, 2, 3]".
  std::string text() const;
};

/// Parses a postprocess list ("[1, 0]", "float16", "reshape:[4, 2, 3]", …)
/// applied to data of rank `inputRank`; nullopt with `why` set when an item
/// is malformed or does not fit the rank it applies to.
std::optional<std::vector<TransformStep>>
parseTransformSteps(const std::vector<std::string> &texts, size_t inputRank,
                    std::string &why);

/// The dtype data of `dtype` has after `steps`.
DType dtypeAfter(const std::vector<TransformStep> &steps, DType dtype);

/// True when `steps` keep element positions up to a permutation of axes:
/// permutations and casts, no reshape. Such a transform maps sub-boxes of
/// its input to sub-boxes of its output, so it can be cut and merged.
bool keepsBoxes(const std::vector<TransformStep> &steps);

/// The composed permutation of steps that only permute (identity of `rank`
/// when there are none).
Permutation composedPermutation(const std::vector<TransformStep> &steps,
                                size_t rank);

/// Distinct transforms by id; id 0 is the empty transform.
class TransformTable {
public:
  /// By id. (Changing steps here leaves intern's index behind: for tests
  /// that damage a plan.)
  std::vector<std::vector<TransformStep>> transforms{{}};

  /// The id of `steps`, adding them when new (compared by their text; a
  /// hash lookup, as a text plan may hold millions of copies).
  uint32_t intern(const std::vector<TransformStep> &steps);
  size_t size() const { return transforms.size(); }
  const std::vector<TransformStep> &operator[](uint32_t id) const {
    return transforms[id];
  }

private:
  /// The steps' texts, each ended by '\n' -> id.
  std::unordered_map<std::string, uint32_t> ids_{{"", 0}};
};

/// A round-local dense buffer: `shape` elements of `dtype`.
struct BufferDecl {
  DType dtype = DType::F32;
  /// Shared: a plan declares millions of buffers, of a few shapes
  /// (schedule and the plan readers share equal shapes).
  SharedShape shape;
  int64_t bytes() const;
};

enum class Opcode { Read, Send, Recv, Copy, Write };

struct Instruction {
  Opcode opcode = Opcode::Read;
  /// Read: the buffer filled from source tensor `tensor`, region `region`.
  /// Copy: the output buffer. Write: the buffer written.
  uint32_t buffer = 0;
  /// Copy: the input buffer.
  uint32_t input = 0;
  /// Read: into Plan::sourceTensors; Write: into Plan::destinationTensors.
  uint32_t tensor = 0;
  /// Send, Recv: the other rank (the buffers are below).
  uint32_t peer = 0;
  /// Copy: applied to the input to give the output; into Plan::transforms
  /// (a plan has a handful of distinct transforms and may have millions of
  /// copies), 0 is the empty transform.
  uint32_t transform = 0;
  // (The 32-bit fields come first, so that none is padded: a plan holds
  // millions of instructions.)
  /// Read, Write: the region of the tensor's key.
  Box region;
  /// Send, Recv: the buffers packed, in order, into one message. (No
  /// inline elements: 16 bytes where a std::vector takes 24, in every one
  /// of millions of instructions, most of which have none.)
  llvm::SmallVector<uint32_t, 0> buffers;
};

struct Round {
  /// Buffers by id; their memory is this round's footprint on the rank.
  std::vector<BufferDecl> buffers;
  /// Reads, then sends and receives, then copies, then writes.
  std::vector<Instruction> instructions;
  int64_t bufferBytes() const;
};

struct RankProgram {
  std::vector<Round> rounds;
};

/// Per-rank totals, for the summary.
struct RankCost {
  int64_t bytesRead = 0;
  int64_t bytesSent = 0;
  int64_t bytesReceived = 0;
  int64_t bytesWritten = 0;
  int64_t peakBufferBytes = 0;
  int64_t instructions = 0;
};

/// How the destination directory presents the checkpoint.
enum class DestinationFormat {
  /// Safetensors files and metadata.json (aoa-metadata v1).
  Aoa,
  /// A Hugging Face model directory: every key whole in one file, each file
  /// with `__metadata__ {"format": "pt"}`, model.safetensors.index.json
  /// when there are several files, the copied files (config.json,
  /// tokenizer files, ...) beside them, and metadata.json as for Aoa.
  HuggingFace,
};

/// Which ranks may read a source file.
enum class SourceAccess {
  /// Only the rank the file belongs to (File::rank): every rank may have
  /// a source directory of its own (aoa-run --node-local).
  Owner,
  /// Any rank: every rank sees every source file (a shared file system, or
  /// one host), so the rank that writes a piece reads it itself and no
  /// bytes travel between ranks (aoa-compile --shared-src).
  Shared,
};

struct Plan {
  uint32_t ranks = 0;
  int64_t memoryBudget = 0;
  DestinationFormat destinationFormat = DestinationFormat::Aoa;
  SourceAccess sourceAccess = SourceAccess::Owner;
  std::vector<File> sourceFiles;
  std::vector<File> destinationFiles;
  std::vector<StoredTensor> sourceTensors;
  std::vector<StoredTensor> destinationTensors;
  /// Destination keys added by `_ -> key`: nothing is written for them.
  std::vector<std::string> addedKeys;
  /// Files copied unchanged from the source directory into the destination
  /// when the checkpoint is installed (paths relative to both).
  std::vector<std::string> copiedFiles;
  /// One program per rank (all rounds, the same count on every rank).
  std::vector<RankProgram> programs;
  /// The transforms copy instructions name (Instruction::transform).
  TransformTable transforms;
  /// Set when only this rank's program was read (binplan::readBinaryPlanRank
  /// and what aoa-run reads in each process of a job): the other programs
  /// are empty, and what needs them (the pairing of messages, what a resumed
  /// run may skip) is agreed between the processes instead.
  std::optional<uint32_t> onlyRank;

  std::vector<RankCost> costs() const;
  /// The steps of copy instruction `in`; its id must be in the table (the
  /// verifier checks that of a plan read from a file).
  const std::vector<TransformStep> &steps(const Instruction &in) const {
    return transforms[in.transform];
  }
};

} // namespace plan
} // namespace aoa

#endif // AOA_IR_PLAN_H
